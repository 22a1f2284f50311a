"""English's spoken form (American, as Piper's en_US voices say it): numbers, money, dates, times, ids, symbols and
abbreviations, for the ear. Part of the pack `loop.locale.en`, found through its `spoken_form()` by the voice
(`voice.speech.spoken`, which drops markup first, the same for every language).

Every rule is a precompiled regex and a replacement, applied in a fixed order: the specific shapes
(money, dates, times, phone numbers, ids) before the general ones (ranges, long numbers, decimals,
counts), so a digit is read once, by the most specific rule that fits. No digit survives the pass,
which makes it idempotent. Checked against `espeak-ng -v en-us -x`, the phonemizer Piper uses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from loop.locale.en._spoken_numbers import MONTHS, cardinal, clock, digits, ordinal, year

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)"  # 1,250 or 1250
_NOT_AFTER = r"(?<![\w.,])"  # a number starts here, not inside a word or another number
_NOT_BEFORE = r"(?!\d|[.,]\d)"  # ... and ends here

_CURRENCIES = {"$": ("dollar", "dollars", "cent", "cents"), "€": ("euro", "euros", "cent", "cents"),
               "£": ("pound", "pounds", "penny", "pence")}
_SCALE_WORDS = {"k": "thousand", "m": "million", "b": "billion", "bn": "billion"}
_MONTH_NUMBER = {name: i + 1 for i, name in enumerate(MONTHS)} | {
    name[:3]: i + 1 for i, name in enumerate(MONTHS)} | {"Sept": 9}
_MONTH = "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
_DAY_OF_MONTH = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR_AFTER = r"(?:,?\s+(?P<year>\d{4})\b)?"
_UNITS = {"kg": ("kilogram", "kilograms"), "km": ("kilometer", "kilometers"), "lb": ("pound", "pounds"),
          "lbs": ("pound", "pounds"), "oz": ("ounce", "ounces"), "mi": ("mile", "miles"),
          "mph": ("mile per hour", "miles per hour"), "hr": ("hour", "hours"), "hrs": ("hour", "hours"),
          "min": ("minute", "minutes"), "mins": ("minute", "minutes"), "sec": ("second", "seconds"),
          "secs": ("second", "seconds"), "ft": ("foot", "feet"), "cm": ("centimeter", "centimeters"),
          "mm": ("millimeter", "millimeters"), "ml": ("milliliter", "milliliters"), "GB": ("gigabyte", "gigabytes"),
          "MB": ("megabyte", "megabytes")}
# Words after which a number is an identifier, read digit by digit ("order 4567", "ticket #12").
_ID_WORDS = ("orders?|ids?|numbers?|tickets?|tracking|accounts?|acct|reference|ref|confirmation|invoices?|"
             "case|code|pin|extension|ext|zip|flight|sku|serial|receipt|parcels?|packages?|shipments?")
# espeak reads a lone "A" as the article ("uh"); "eh" is how en-us says the letter.
_LETTER_NAMES = {"A": "eh"}

# Written -> spoken, whole tokens, case-sensitive. Lowercase entries also match Capitalised.
_ABBREVIATIONS = {
    "Mr.": "Mister", "Mrs.": "Missus", "Ms.": "Miz", "Prof.": "Professor", "Jr.": "Junior", "Sr.": "Senior",
    "Mt.": "Mount", "St.": "Street", "Dr.": "Doctor", "Ave.": "Avenue", "Rd.": "Road", "Blvd.": "Boulevard",
    "Ln.": "Lane", "Apt.": "Apartment", "Ste.": "Suite", "approx.": "approximately", "e.g.": "for example",
    "i.e.": "that is", "etc.": "et cetera", "vs.": "versus", "incl.": "including", "dept.": "department",
    "est.": "estimated", "a.k.a.": "also known as", "w/o": "without", "w/": "with", "qty": "quantity",
    "pcs": "pieces", "ASAP": "as soon as possible", "24/7": "twenty-four seven", "and/or": "and or",
    "911": "nine one one", "411": "four one one",
}
# Acronyms said letter by letter (espeak says "ETA" as "eeta", "UPS" as "ups"); a plural "s" becomes "'s".
_SPELLED = ("ID", "ETA", "USPS", "UPS", "DHL", "SMS", "FAQ", "PDF", "URL", "USA", "FYI", "PO", "VIP", "ATM")
_TITLES = frozenset(["Mr.", "Mrs.", "Ms.", "Prof.", "Mt."])  # always followed by a name: never a sentence end
_DIGIT_RUN = re.compile(r"\d+")
_CAPITAL_NEXT = re.compile(r"\s+[A-Z]")
_NUMBER_SIGN = re.compile(r"(?i)\bno\.|#")
_NUMBER_TWICE = re.compile(r"(?i)\bnumber(\s+number)+")
_URL_SCHEME = re.compile(r"^(?:https?://)?(?:www\.)?", re.I)
_URL_QUERY = re.compile(r"[?#]")


def _abbreviation_pattern() -> re.Pattern[str]:
    keys = (set(_ABBREVIATIONS) | {k[0].upper() + k[1:] for k in _ABBREVIATIONS if k[0].islower()}
            | set(_SPELLED) | {k + "s" for k in _SPELLED})
    alternatives = "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))
    return re.compile(rf"(?<![\w.])(?:{alternatives})(?![\w/])")


# ---- replacements -------------------------------------------------------------------------------


def _number(text: str) -> str:
    """A quantity as written: "1,250" -> one thousand two hundred fifty, "2.5" -> two point five."""
    whole, _, fraction = text.replace(",", "").partition(".")
    return f"{_count(whole or '0')} point {digits(fraction)}" if fraction else _count(whole)


def _count(text: str) -> str:
    """Digits as a quantity; past a quadrillion nobody says it as one, so digit by digit (and int() stays bounded)."""
    return cardinal(int(text)) if len(text) <= 15 else digits(text)


def _money(m: re.Match[str]) -> str:
    singular, plural, cent, cents = _CURRENCIES[m["cur"]]
    amount = m["amount"].replace(",", "")
    whole, _, fraction = amount.partition(".")
    sign = "minus " if m["neg"] else ""
    scale = (m["scale"] or _SCALE_WORDS.get((m["abbr"] or "").lower(), "")).lower()
    if scale or len(fraction) > 2 or len(whole) > 15:
        return f"{sign}{_number(amount)}{' ' + scale if scale else ''} {plural}"
    units, hundredths = int(whole or 0), int(fraction.ljust(2, "0")) if fraction else 0
    parts = []
    if units or not hundredths:
        parts.append(f"{cardinal(units)} {singular if units == 1 else plural}")
    if hundredths:
        parts.append(f"{cardinal(hundredths)} {cent if hundredths == 1 else cents}")
    return sign + " and ".join(parts)


def _percent(m: re.Match[str]) -> str:
    return f"{'minus ' if m['neg'] else ''}{_number(m['num'])} percent"


def _date(month: int, day: int, year_text: str | None, original: str) -> str:
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return original
    spoken = f"{MONTHS[month - 1]} {ordinal(day)}"
    if year_text:
        full_year = int(year_text) + (2000 if len(year_text) == 2 else 0)
        spoken += f", {year(full_year)}"
    return spoken


def _numeric_date(m: re.Match[str]) -> str:
    """"2026-12-01", "12/01/2026", "12/1/26" -> "December first, twenty twenty-six"."""
    return _date(int(m["month"]), int(m["day"]), m["year"], m[0])


def _named_date(m: re.Match[str]) -> str:
    return _date(_MONTH_NUMBER[m["month"]], int(m["day"]), m["year"], m[0])


def _time(m: re.Match[str]) -> str:
    hour, minute, second, meridiem = int(m["hour"]), int(m["minute"] or 0), int(m["second"] or 0), m["mer"]
    if hour > 24 or minute > 59 or second > 59:
        return m[0]
    spoken = clock(hour, minute, has_meridiem=bool(meridiem))
    if second:
        spoken += f" and {cardinal(second)} second{'s' if second > 1 else ''}"
    # "a.m." with its dots: espeak reads "a m" as "uh m" and "AM" sometimes as the word "am".
    return f"{spoken} {meridiem.lower()}.m." if meridiem else spoken


def _phone(m: re.Match[str]) -> str:
    area = m["area"] or m["area2"]
    if not (area or m["cc"]) and m["sep"] == ".":
        return m[0]  # "555.0134" is more likely a decimal than a phone number
    groups = [digits(g) for g in (area, m["exchange"], m["line"]) if g]
    if m["cc"]:
        groups.insert(0, digits(m["cc"]))
    return ", ".join(groups)


def _international_phone(m: re.Match[str]) -> str:
    return ", ".join([f"plus {digits(m['cc'])}", *(digits(g) for g in _DIGIT_RUN.findall(m["rest"]))])


def _digit_groups(m: re.Match[str]) -> str:
    return ", ".join(digits(g) for g in _DIGIT_RUN.findall(m[0]))


def _spell(token: str) -> str:
    """"1Z-99A" -> "one Z, nine nine eh": digits one by one, letters by name, a dash as a pause."""
    words = []
    for ch in token:
        if ch.isdigit():
            words.append(digits(ch))
        elif ch == "-":
            words.append(",")
        else:
            words.append(_LETTER_NAMES.get(ch.upper(), ch.upper()))
    return " ".join(words).replace(" ,", ",")


def _identifier(m: re.Match[str]) -> str:
    lead = m["lead"]
    if _NUMBER_SIGN.search(lead):
        named = _NUMBER_SIGN.sub(" number ", lead)
        lead = _NUMBER_TWICE.sub("number", " ".join(named.split())) + " "
    return f"{lead}{_spell(m['id'])}"


def _ordinal(m: re.Match[str]) -> str:
    number = m["num"].replace(",", "")
    return ordinal(int(number)) if len(number) <= 15 else digits(number)


def _unit(m: re.Match[str]) -> str:
    one, many = _UNITS[m["unit"]]
    return f"{m['num']} {one if m['num'] == '1' else many}"


def _abbreviation(m: re.Match[str]) -> str:
    word = m[0]
    if word in ("St.", "Dr."):
        return _street_or_title(m)
    if word in _SPELLED:
        return _spell(word)
    if word[:-1] in _SPELLED:
        return _spell(word[:-1]) + "'s"  # "IDs" -> "I D's"
    spoken = _ABBREVIATIONS.get(word) or _capitalised(_ABBREVIATIONS[word[0].lower() + word[1:]])
    if word.endswith(".") and word not in _TITLES and _ends_sentence(m):
        spoken += "."  # "... pears, etc." keeps its full stop
    return spoken


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _ends_sentence(m: re.Match[str]) -> bool:
    return not m.string[m.end():].strip() or bool(_CAPITAL_NEXT.match(m.string, m.end()))


def _street_or_title(m: re.Match[str]) -> str:
    """"Main St." is a street, "St. Louis" a saint; "Elm Dr." a drive, "Dr. Lee" a doctor."""
    before = m.string[: m.start()].split()
    previous = before[-1][:1] if before else ""
    # A capitalised word before it names the street, unless it only starts the sentence ("Call Dr. Lee").
    after_street_name = previous.isdigit() or (previous.isupper() and len(before) > 1)
    name_follows = bool(_CAPITAL_NEXT.match(m.string, m.end()))
    if name_follows and not after_street_name:
        spoken = "Saint" if m[0] == "St." else "Doctor"
    else:
        spoken = "Street" if m[0] == "St." else "Drive"
    if spoken in ("Street", "Drive") and _ends_sentence(m):
        spoken += "."
    return spoken


def _long_number(m: re.Match[str]) -> str:
    """4+ digits: a year if it looks like one, a round amount, else an identifier read digit by digit."""
    text, negative = m["num"], bool(m["neg"])
    if negative:
        return "minus " + _count(text)
    if len(text) == 4 and 1900 <= int(text) <= 2099:
        return year(int(text))
    if text.endswith("00") and not text.startswith("0") and len(text) <= 15:
        return cardinal(int(text))
    return digits(text)


def _plain_number(m: re.Match[str]) -> str:
    """What no specific rule claimed: "4567" an id, "2026" a year, "3" or "2.5" or "-1,250" a quantity."""
    if len(m["num"]) >= 4 and m["num"].isdigit():
        return _long_number(m)
    return ("minus " if m["neg"] else "") + _number(m["num"])


def _decade(m: re.Match[str]) -> str:
    """"1990s" -> "nineteen nineties", "'80s" -> "eighties"."""
    number = int(m["num"])
    words = year(number) if len(m["num"]) == 4 else cardinal(number)
    return words[:-1] + "ies" if words.endswith("y") else words + "s"


def _dotted_number(m: re.Match[str]) -> str:
    return " point ".join(_count(part) for part in m[0].split("."))


def _range(m: re.Match[str]) -> str:
    return f"{cardinal(int(m['low']))} to {cardinal(int(m['high']))}"


def _leftover_digits(m: re.Match[str]) -> str:
    text = m[0]
    return cardinal(int(text)) if len(text) <= 3 else digits(text)


def _url(m: re.Match[str]) -> str:
    """Say the site, not the scheme or query: "https://www.shop.com/help?x=1" -> "shop dot com slash help"."""
    address = _URL_SCHEME.sub("", m[0])
    address = _URL_QUERY.split(address, maxsplit=1)[0].rstrip("/")
    host, *path = address.split("/")
    if len(path) > 2:
        path = []  # a deep path is unsayable; the site is enough to find it
    return " slash ".join([_dotted(host), *(_dotted(p) for p in path)])


def _email(m: re.Match[str]) -> str:
    user, host = m[0].split("@", 1)
    return f"{_dotted(user)} at {_dotted(host)}"


def _dotted(text: str) -> str:
    return text.replace(".", " dot ").replace("-", " dash ").replace("_", " underscore ")


# ---- the rules, in order ---------------------------------------------------------------------------

_DIGITS = frozenset("0123456789")
_WEB = "\x00"  # stands for "the text has a web address in it" in a rule's gate
_WEB_HINT = re.compile(r"://|www\.|\.(?:com|org|net|io|dev|app|info|shop)\b")
_DAYS = {"Mon": "Monday", "Tue": "Tuesday", "Tues": "Tuesday", "Wed": "Wednesday", "Thu": "Thursday",
         "Thur": "Thursday", "Thurs": "Thursday", "Fri": "Friday", "Sat": "Saturday", "Sun": "Sunday"}
_DAY = "|".join(sorted(_DAYS, key=len, reverse=True))
_PER = "month|mo|year|yr|day|week|wk|hour|hr|night|person|item|unit|kg|lb"


class Rule(NamedTuple):
    """A pattern and its replacement, run only when the text can match: it has a digit (if `digit`)
    and one of `chars` (if given). Gates are checked against the text as it came in: replacements
    add only letters, spaces and , . - ' so they never open a gate that was closed."""

    digit: bool
    chars: frozenset[str] | None
    pattern: re.Pattern[str]
    replacement: Callable[[re.Match[str]], str] | str


def _rule(pattern: str, replacement: Callable[[re.Match[str]], str] | str, needs: str = "",
          digit: bool = True, flags: int = 0) -> Rule:
    return Rule(digit, frozenset(needs) if needs else None, re.compile(pattern, flags), replacement)


_RULES = [
    _rule(r"\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b", _email, "@", digit=False),
    _rule(r"(?<![A-Za-z])(?:https?://|www\.)[^\s<>\"']*[^\s<>\"'.,;:!?)]", _url, _WEB, digit=False, flags=re.I),
    _rule(r"\b[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:com|org|net|io|dev|app|info|shop)\b(?:/[^\s]*[^\s.,;:!?)])?",
          _url, _WEB, digit=False),
    _rule(rf"(?<![\w.$])(?P<neg>-)?(?P<cur>[$€£])\s?(?P<amount>{_NUM}(?:\.\d+)?|\.\d+)"
          rf"(?:(?P<abbr>[kKmMbB]|bn)\b|\s(?P<scale>thousand|million|billion|trillion)\b)?", _money, "$€£"),
    _rule(rf"{_NOT_AFTER}(?P<neg>-)?(?P<num>{_NUM}(?:\.\d+)?)\s?%", _percent, "%"),
    _rule(r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b", _numeric_date, "-"),
    _rule(r"\b(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4}|\d{2})\b", _numeric_date, "/"),
    _rule(r"\b(?P<month>0\d|1[0-2])/(?P<day>[0-3]\d)(?P<year>)(?![/\d])", _numeric_date, "/"),  # "01/12"
    _rule(rf"\b(?P<month>{_MONTH})\.?\s+{_DAY_OF_MONTH}\b{_YEAR_AFTER}", _named_date),
    _rule(rf"\b{_DAY_OF_MONTH}\s+(?:of\s+)?(?P<month>{_MONTH})\b{_YEAR_AFTER}", _named_date),
    _rule(r"(?<![\d:.])(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?(?![\d:])"
          r"(?:\s?(?P<mer>[AaPp])\.?\s?[Mm]\b\.?)?", _time, ":"),
    _rule(r"(?<![\w.:,])(?P<hour>\d{1,2})\s?(?P<minute>)(?P<second>)(?P<mer>[AaPp])\.?\s?[Mm]\b\.?", _time, "mM"),
    _rule(r"(?<![\w+])\+(?P<cc>\d{1,3})(?P<rest>(?:[\s.-]\(?\d{1,4}\)?){2,})(?![\w-]|[.,]\d)",
          _international_phone, "+"),
    _rule(r"(?<![\w+$.,-])(?:(?:(?P<cc>1)[\s.-]?)?(?:\((?P<area>\d{3})\)|(?P<area2>\d{3}))[\s.-]?)?"
          r"(?P<exchange>\d{3})(?P<sep>[.-])(?P<line>\d{4})(?![\w-]|[.,]\d)", _phone, "-."),
    _rule(rf"(?<!\w)(?P<lead>(?:(?:(?:{_ID_WORDS})(?!\w)|no\.|#)[\s:]*)+)"
          r"(?P<id>(?=[A-Za-z]{0,3}-?\d)(?![0-9]+(?:st|nd|rd|th)\b)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)(?![\w$])",
          _identifier, flags=re.I),
    _rule(rf"{_NOT_AFTER}(?P<num>{_NUM})(?:st|nd|rd|th)\b", _ordinal, "stndrhSTNDRH", flags=re.I),
    _rule(r"(?<![\w.,])'?(?P<num>\d0|\d{3}0)'?s\b", _decade, "s"),
    _rule(rf"{_NOT_AFTER}(?P<num>{_NUM}(?:\.\d+)?)\s?(?P<unit>{'|'.join(_UNITS)})\b", _unit),
    _rule(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])", " "),  # "COVID19", "5x"
    _rule(rf"\b(?P<first>{_DAY})\s?[-–]\s?(?P<last>{_DAY})\b", lambda m: f"{_DAYS[m['first']]} to {_DAYS[m['last']]}",
          "-–", digit=False),
    _rule(rf"\b(?P<day>{_DAY})\b\.?(?=,|\s+(?:{_MONTH}|\d))", lambda m: _DAYS[m["day"]], ",0123456789", digit=False),
    _rule(r"\s?°\s?F\b", " degrees Fahrenheit", "°", digit=False),
    _rule(r"\s?°\s?C\b", " degrees Celsius", "°", digit=False),
    _rule(r"\s?°", " degrees", "°", digit=False),
    _rule(r"~\s?(?=\d)", "about ", "~"),
    Rule(False, None, _abbreviation_pattern(), _abbreviation),
    _rule(r"\s*&\s*", " and ", "&", digit=False),
    _rule(r"\s+@\s+", " at ", "@", digit=False),
    _rule(r"\s?%", " percent", "%", digit=False),
    _rule(r"#", " ", "#", digit=False),
    _rule(r"\s?×\s?", " times ", "×", digit=False),
    _rule(r"(?<=\d)\+|\s\+\s|(?<![\w+])\+(?=\d)", " plus ", "+", digit=False),
    _rule(rf"\s?/\s?(?=(?:{_PER})\b)", " per ", "/", digit=False),  # "$5/month"
    _rule(r"(?<=\d)/(?=\d)", " slash ", "/"),  # not a date: "13/45/2026"
    _rule(r"(?<![\w.,])\d+(?:\.\d+){2,}(?![\d.]|[.,]\d)", _dotted_number, "."),  # "version 1.2.3"
    _rule(r"(?<![\w.,-])(?P<low>\d{1,3})(?:-|\s?–\s?)(?P<high>\d{1,3})(?![\d-]|[.,]\d)", _range, "-–"),
    _rule(r"(?<![\w.,-])\d+(?:-\d+)+(?![\w-]|[.,]\d)", _digit_groups, "-"),  # "1100-123", a postcode
    _rule(rf"{_NOT_AFTER}(?P<neg>-)?(?P<num>{_NUM}\.\d+|\.\d+|{_NUM}){_NOT_BEFORE}", _plain_number),
    _rule(r"\d+", _leftover_digits),
    _rule(r"(?<=[A-Za-z])/(?=[A-Za-z])", " or ", "/", digit=False),  # after the numbers: "kg/20"
]


class EnglishUS:
    """American English, as Piper's en_US voices (through espeak-ng en-us) should hear it."""

    def speak(self, text: str) -> str:
        present = set(text)
        if ("." in present or ":" in present) and _WEB_HINT.search(text):
            present.add(_WEB)
        has_digit = not _DIGITS.isdisjoint(present)
        for needs_digit, chars, pattern, replacement in _RULES:
            if (has_digit or not needs_digit) and (chars is None or not chars.isdisjoint(present)):
                text = pattern.sub(replacement, text)
        return text
