"""Greenvale Energy's phone line: the balance owed on an account, and a meter reading (sent after a yes).

Run it with  voiceloop serve --agent evals/agents/electricity/energy.py:build --llm local
"""

from loop import Agent, LoopConfig, ScriptedModel, Tool

# account number (8 digits) -> holder, address, balance owed (negative: in credit), due date, last reading
ACCOUNTS = {"40125583": ("Helen Park", "14 Willow Way", 84.20, "July 3", "04512"),
            "40217736": ("Mohammed Ali", "2 Quarry Hill", 132.75, "July 10", "18340"),
            "40398810": ("Fiona Grant", "Flat 6, 90 King Street", 0.00, "", "07791"),
            "40550027": ("Oliver Schmidt", "33 Meadow Close", -25.50, "", "22065"),
            "40712264": ("Beatrice Osei", "8 Chapel Row", 210.00, "June 28", "31007"),
            "40893341": ("Ravi Shankar", "51 Orchard Drive", 47.60, "July 15", "00986")}
PRICE_PER_KWH = 0.28


def digits(value: str) -> str:
    return "".join(ch for ch in str(value) if ch.isdigit())


def build(call_id: str = "") -> Agent:
    readings = {number: row[4] for number, row in ACCOUNTS.items()}   # each call starts from the same readings

    def account_balance(account_number: str) -> dict[str, str]:
        """The balance owed on an account and when it is due, by the eight-digit account number"""
        number = digits(account_number)
        if number not in ACCOUNTS:
            return {"account_number": account_number, "found": False, "note": "account numbers have eight digits"}
        name, address, owed, due, _ = ACCOUNTS[number]
        if owed <= 0:
            balance = "nothing owed" if owed == 0 else f"${-owed:.2f} in credit"
            return {"account_number": number, "name": name, "balance": balance}
        return {"account_number": number, "name": name, "address": address, "balance owed": f"${owed:.2f}", "due": due}

    def submit_meter_reading(account_number: str, reading: str) -> str:
        """Send a five-digit electricity meter reading for an account"""
        number, value = digits(account_number), digits(reading)
        if number not in ACCOUNTS:
            return f"There is no account {account_number}; the account number is at the top of every bill."
        if len(value) != 5:
            return f"A meter reading has five digits, the black numbers on the meter; {reading!r} is not one."
        if int(value) < int(readings[number]):
            return f"{value} is lower than the last reading, {readings[number]}; please check the meter again."
        used = int(value) - int(readings[number])
        readings[number] = value
        cost = used * PRICE_PER_KWH
        return f"Done: reading {value} for account {number} is in, {used} units since the last one, about ${cost:.2f}."

    prompt = (
        "You answer the phone for Greenvale Energy. Talk like a friendly, clear customer adviser: one or two short "
        "sentences.\nOnly a tool knows the accounts. Never make up a balance, a date or a reading.\n"
        "- the caller asks what they owe, their balance or when the bill is due, and gives the account number "
        "-> account_balance\n"
        "- the caller wants to give a meter reading and gives the account number and the five-digit reading "
        "-> submit_meter_reading\n"
        "Account numbers have eight digits and readings five (\"oh\" is 0; pass digits only, keep leading zeros). "
        "If the account number or the reading is missing, ask for it. "
        "After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: if you smell gas or see sparks, leave and call 0800 111 999.")
    return Agent(model=ScriptedModel(["I can help. What is your account number?"]), config=LoopConfig.profile("voice"),
                 tools=[Tool(account_balance),
                        Tool(submit_meter_reading, mutates=True,
                             confirm="submit the reading {reading} for account {account_number}")],
                 system_prompt=prompt, name="electricity",
                 scope="Sorry, I can only help with your balance and meter readings.",
                 vocabulary=["Greenvale Energy", "account number", "meter reading", "balance", "bill", "owe",
                             "direct debit", "units", "kilowatt hours"])


build.greeting = "Greenvale Energy, how can I help?"   # not in the README: found by trial
