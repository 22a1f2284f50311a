"""Tony's Pizza phone line: the menu, an order for delivery (after a yes), and tracking an order by its number.

Run it with  voiceloop serve --agent evals/agents/pizza_shop/shop.py:build --llm local
"""

from typing import Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool

Pizza = Literal["margherita", "pepperoni", "hawaiian", "veggie supreme", "bbq chicken", "four cheese"]
MENU = {"margherita": 11.0, "pepperoni": 13.5, "hawaiian": 13.5, "veggie supreme": 14.0, "bbq chicken": 15.0,
        "four cheese": 13.0}   # large pizzas, dollars
# order number -> what, where, status
ORDERS = {"2719": ("2 pepperoni", "8 Elm Street", "out for delivery, arriving in about 10 minutes"),
          "3054": ("1 margherita", "41 Oak Avenue", "in the oven, out for delivery in about 20 minutes"),
          "4188": ("3 four cheese", "17 Birch Lane", "delivered at 6:40 p.m."),
          "5502": ("1 bbq chicken", "230 River Road", "being made, arriving in about 35 minutes"),
          "6630": ("2 hawaiian", "5 Maple Court", "out for delivery, arriving in about 5 minutes")}


def menu() -> dict[str, str]:
    """The pizzas on the menu and their prices (all large)"""
    return {name: f"${price:.2f}" for name, price in MENU.items()}


def build(call_id: str = "") -> Agent:
    orders = dict(ORDERS)   # each call starts from the same orders

    def track_order(order_number: str) -> str:
        """Where an order is, by its four-digit order number"""
        number = "".join(ch for ch in str(order_number) if ch.isdigit())
        if number not in orders:
            return f"There is no order {order_number}; the order number has four digits and is in the text we sent."
        what, where, status = orders[number]
        return f"Order {number}, {what} to {where}: {status}".rstrip(".") + "."

    def place_order(pizza: Pizza, quantity: int, address: str) -> str:
        """Order pizzas of one kind for delivery to an address"""
        if not 1 <= quantity <= 10:
            return "We take 1 to 10 pizzas per order on the phone."
        number = str(7001 + len(orders) - len(ORDERS))
        orders[number] = (f"{quantity} {pizza}", address, "being made, arriving in about 40 minutes")
        total = MENU[pizza] * quantity
        return (f"Done: {quantity} {pizza} to {address}, ${total:.2f} paid on delivery. "
                f"Your order number is {number}, arriving in about 40 minutes.")

    prompt = (
        "You answer the phone for Tony's Pizza. Talk like a cheerful person at the counter: "
        "one or two short sentences.\n"
        "Only a tool knows the prices and the orders. Never make up a price, an order or a delivery time.\n"
        "- the caller asks what pizzas there are or what one costs -> menu\n"
        "- the caller asks where their order is and gives the four-digit order number -> track_order\n"
        "- the caller wants pizzas delivered and has given the pizza, how many and the street address -> place_order\n"
        "One kind of pizza per order. If the pizza, the number of pizzas, the address or the order number is missing, "
        "ask for it. After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: we deliver from 11 a.m. to 11 p.m., every day, "
        "and take cash or card on delivery.")
    return Agent(model=ScriptedModel(["Sure, which pizza would you like?"]), config=LoopConfig.profile("voice"),
                 tools=[Tool(menu), Tool(track_order),
                        Tool(place_order, mutates=True, confirm="order {quantity} {pizza} to {address}")],
                 system_prompt=prompt, name="pizza_shop",
                 scope="Sorry, I can only help with our pizza menu, new orders and tracking an order.",
                 vocabulary=["Tony's Pizza", "order number", "delivery", "large", "margherita", "pepperoni",
                             "hawaiian", "veggie supreme", "BBQ chicken", "four cheese", "Elm Street", "Oak Avenue"])


build.greeting = "Tony's Pizza, what can I get for you?"   # not in the README: found by trial; --greeting overrides
