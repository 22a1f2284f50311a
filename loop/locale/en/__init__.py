"""English: the words a caller's meaning is read from, and every fixed sentence the agent says.

voiceloop's default language pack (`loop.locale.get("en")`). A language is a package like this one with the same
names, plus its tests: the number words (defined here once: the spoken form, grounding, dictated digits, word
error rate and the tests' transcript matching all read them), the words of turn taking, of a yes or a no, the
digit homophones speech-to-text writes, and the sentences said on a hand-over, a failure or a declined action.
Fragments under ANSWER_ are regular expressions matched between word boundaries (`voice.call.answers`).
"""

from __future__ import annotations

from loop.locale._text import SpokenRules

# the words of answers and questions, and the approval grammar: in a module of their own
from loop.locale.en._answers import *  # noqa: F403  (every name there is the pack's)

# what a caller's words are about, what a reply may not say, what names an argument: in their own too
from loop.locale.en._topics import *  # noqa: F403

LANGUAGE = "en"

# ---- numbers --------------------------------------------------------------------------------------------
ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
HUNDRED, THOUSAND = "hundred", "thousand"
# the articles that count one of a count argument's own noun ("a box" for `boxes`: 1); tests/data/one_counted.tsv
ONE_ARTICLES = ("a", "an")
MISHEARD_ARTICLES: dict[str, int] = {}  # an article heard for a number it sounds like (es: "los" for "dos"); none
SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, THOUSAND))
IRREGULAR_ORDINALS = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                      "nine": "ninth", "twelve": "twelfth"}
# an ordinal said -> its cardinal ("thirty-first" reads as "thirty one": "the 31st" restates 31)
ORDINAL_WORDS = {**{o: c for c, o in IRREGULAR_ORDINALS.items()},
                 **{w + "th": w for w in ONES[4:] if w not in IRREGULAR_ORDINALS},
                 **{t[:-1] + "ieth": t for t in TENS[2:]}}
DIGIT_ORDINAL = r"st|nd|rd|th"  # what follows an ordinal written in digits ("31st")
NUMBER_SCALE_WORDS = (HUNDRED, THOUSAND, "point")  # words inside a number said ("two hundred", "four point five")


def numbers_in_digits(text: str) -> str:
    """Number words as digits, for readers that take digits only. English number words are read where they are
    used (`loop.grounding.arguments`), so nothing changes here; a language whose words those readers do not know
    writes its numbers in digits here ("veinte" -> "20")."""
    return text


def cardinal(n: int) -> str:
    """A whole number (0 or more) in words, US style, as written for the ear and for word error rates: 1250 -> "one
    thousand two hundred fifty", 27 -> "twenty-seven" (no "and"). Labelled: tests/data/numbers_spelt.tsv."""
    if n < 20:
        return ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return TENS[tens] + (f"-{ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{ONES[hundreds]} {HUNDRED}" + (f" {cardinal(rest)}" if rest else "")
    scale, name = next((scale, name) for scale, name in SCALES if n >= scale)
    head, rest = divmod(n, scale)
    return f"{cardinal(head)} {name}" + (f" {cardinal(rest)}" if rest else "")


def ordinal(n: int) -> str:
    """1 -> "first", 22 -> "twenty-second", 100 -> "one hundredth": the last word of `cardinal` made an ordinal."""
    said = cardinal(n)
    cut = max(said.rfind(" "), said.rfind("-")) + 1
    head, last = said[:cut], said[cut:]
    if last in IRREGULAR_ORDINALS:
        return head + IRREGULAR_ORDINALS[last]
    if last.endswith("y"):
        return head + last[:-1] + "ieth"
    return head + last + "th"


# A digit said alone, as a caller dictates an id ("four oh two one")
DIGIT_WORDS = {**{w: str(i) for i, w in enumerate(ONES[:10])}, "oh": "0"}
# One number word as a transcript writes it, a regular expression: "seven", "sevens", "seventh", "oh", "first",
# "twentieth" (a dictated id's words, `voice/speech/_dictated_digits.py`; labelled: tests/data/number_words.tsv)
NUMBER_WORD = "(?:" + "|".join([ONES[0], *(w for w in DIGIT_WORDS if w not in ONES), *ONES[1:], *TENS[2:], HUNDRED,
                                THOUSAND, *IRREGULAR_ORDINALS.values(),
                                "(?:" + "|".join(t[:-1] for t in TENS[2:]) + ")ieth"]) + ")(?:th|s)?"
# Words Whisper writes in capitals that are no letters of a reference ("my ID 4821", "at 10 AM 2")
CAPITAL_WORDS = frozenset({"I", "ID", "OK", "AM", "PM", "TV", "PIN", "ZIP", "REF", "NO", "US", "UK", "USA", "ATM",
                           "VIN", "DOB", "ASAP", "IT", "HR", "MR", "MRS", "MS", "DR", "ST", "RD"})
# Words Whisper writes for a digit heard alone ("two zero two zero" -> "to 0 to 0")
DIGIT_HOMOPHONES = {"to": "2", "too": "2", "for": "4", "won": "1", "ate": "8"}
REPEATED_DIGIT = {"double": 2, "triple": 3}  # "double seven" in a dictated number: 77
# Whisper writes a digit said alone as its word rather than as the digit (a digit dictated with pauses is then read
# again by its words, voice/speech/_island_words.py): not English's, which tiny.en writes as digits when told to
DIGIT_ALONE_AS_WORD = False
# how a call's vocabulary is put before Whisper's transcript (voice/speech/_whisper_text.py `vocabulary_prompt`): a
# list, each word capitalised ("Margherita, Calzone, Monday.")
VOCABULARY_PROMPT, VOCABULARY_CAPITALS = "{words}.", True
# caller audio from before a turn's detected onset that its recogniser needs at least (voice/call TurnConfig.preroll_s
# is the call's own, 0.1 s: more made tiny.en repeat short utterances)
ONSET_PREROLL_S = 0.0

# ---- the calendar ---------------------------------------------------------------------------------------
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
TIME_WORDS = ("tomorrow", "today", "tonight", "noon", "midnight", "morning", "afternoon", "evening", "next week",
              "weekend")
AMBIGUOUS_MONTHS = frozenset({"may"})  # a month that is also a common word: no date on its own
DATE_JOINERS = ("the", "of")  # between a month and its day ("July the sixteenth", "the 5th of August")
DAY_ARTICLE = "the"  # before a day of the month said alone ("the twenty-first instead")
# before an example of a value in a description ("like LK19 RXT"): a regex
EXAMPLE_LEAD = r"like|e\.g\.,?|for example|such as"


def article_for(article: str, value: str) -> str | None:
    """"a" or "an" as `value`'s first letter wants it ("an annual service", "a repair"), for a confirm template's
    "a {visit}"; None when `article` is neither, or the value's first sound is not plain from its letter ("a unit",
    "an hour", "a one-off"). Labelled: tests/data/articles.tsv."""
    if article.lower() not in ("a", "an") or not value[:1].isalpha():
        return None
    first = value.strip().lower()
    if first[0] in "aeio" and not first.startswith(("one", "eu")):
        wanted = "an"
    elif first[0] in "bcdfgjklmnpqrstvwxyz":
        wanted = "a"
    else:
        return None
    return wanted if article.islower() else wanted.capitalize()


def ordinal_digits(n: int) -> str:
    """21 -> "21st", 12 -> "12th": a day of the month as it is written in digits."""
    return f"{n}{'th' if 11 <= n % 100 <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def date_text(month: int, day: int) -> str:
    """A calendar date as a date argument holds it: "August 5"."""
    return f"{MONTHS[month - 1].title()} {day}"
CLOCK_WORDS = {"noon": "12 pm", "midday": "12 pm", "midnight": "12 am"}  # a time said as a word
# "one" that is no number ("that one", "one moment"): a regular expression
NOT_A_NUMBER = r"\b(?:(?:the|that|this|which|no|every|any) one|one (?:moment|sec(?:ond)?|minute|thing))\b"

# ---- turn taking ----------------------------------------------------------------------------------------
# Said over the agent while listening: never an interruption on their own
BACKCHANNELS = frozenset({"uh-huh", "uh", "huh", "mm", "mhm", "mm-hmm", "hmm", "yeah", "yes", "yep", "ok", "okay",
    "right", "sure", "i", "see", "oh", "ah", "um", "so"})
# A turn of these words alone is a greeting that the reason for the call follows ("Hi. ... My pizza is late."):
# it waits as words that trail off do; labelled: tests/data/greeting_turns.tsv
GREETING_WORDS = frozenset({"hi", "hello", "hey", "hiya", "howdy", "there", "good", "morning", "afternoon", "evening",
                            "yes", "oh", "um", "uh", "er", "erm", "so", "right", "okay", "ok"})
GREETINGS = frozenset({"hi", "hello", "hey", "hiya", "howdy"})  # of those, the ones that greet
# Words a finished request does not end on: articles, prepositions, conjunctions, auxiliaries, verbs that wait
# for what follows ("I want"), possessives and fillers
TRAILING = frozenset({
    "a", "an", "the", "and", "or", "but", "so", "because", "if", "then", "than", "that", "which", "who", "whose",
    "to", "of", "for", "from", "with", "without", "about", "into", "onto", "at", "in", "on", "by", "as", "like",
    "my", "your", "our", "their", "his", "her", "its", "this", "these", "those", "some", "any", "no", "not", "is",
    "are", "was", "were", "am", "be", "been", "being", "has", "have", "had", "do", "does", "did", "can", "could",
    "will", "would", "should", "shall", "may", "might", "must", "i", "we", "you", "he", "she", "they", "it's",
    "i'm", "want", "wanted", "need", "needed", "wanna", "gonna", "going", "trying", "try", "tried", "mean",
    "meant", "think", "wondering", "hoping", "hope", "said", "um", "uh", "er", "erm", "hmm", "well", "also",
    "just", "really", "actually", "maybe"
})

# Words that introduce a name in an answer to "What's the name?" ("um, it's biscuit", "the name's Sam Lee"): a regular
# expression over the answer's start (`loop.grounding._names.answered_name`)
# how a caller gives their own name ("my name is Marita", "this is Sam Lee", "it's under Okafor"); labelled
# examples in tests/data/own_name.tsv. A caller's own name never fills an item or an address. "names" is "name's" as
# speech-to-text writes it without its apostrophe ("Names Ravi Patel").
SELF_INTRODUCTION = (r"\b(?:my name is|my name's|my names|my name|the name is|the name's|the names|name's|names|"
                     r"this is|i'm|i am|it's under|it is under|booked under|under the name(?: of)?|in the name of|"
                     r"under)\s+")
CASED_LEADS = ("this is", "i'm", "i am")  # "this is urgent", "I'm after": a name only when capitalised
# words after which a bare hour is a time of day ("at 7", "around nine"); labelled: tests/data/clock_times.tsv
CLOCK_CUES = ("at", "around", "about", "by", "till", "until", "after", "before", "from")
# words an address may open with besides its house number ("Flat 2, 10 Mill Lane"); labelled: tests/data/addresses.tsv
ADDRESS_STARTS = ("flat", "apartment", "apt", "unit", "suite", "number", "no")
# what closes a street's name ("22 Baker Street"): its house number is no count; labelled: tests/data/counts.tsv
STREET_TYPES = ("street", "st", "road", "rd", "lane", "ln", "avenue", "ave", "drive", "dr", "court", "ct", "close",
                "way", "place", "pl", "crescent", "terrace", "boulevard", "blvd", "gardens", "square", "row", "parade",
                "grove", "walk", "hill", "park", "mews", "parkway", "highway", "circle", "green", "rise", "view")
NAME_LEAD = (r"^(?:(?:yes|yeah|yep|ok|okay|sure|um+|uh+|er+|erm|so|well|oh|right)\b[,.]?\s*)*(?:(?:it's|it is|"
             r"that's|that is|the name's|the names|the name is|name's|names|my name is|my name's|my names|his name"
             r" is|her name is|their name"
             r" is|his name's|her name's|she's|he's|this is|i'm|i am|under|for|it's under|it's for|call (?:him|her|it"
             r"))\b[,.]?\s*)*")
NOT_A_NAME = ("sorry", "pardon", "hello", "hi", "thanks", "please", "bye", "hang", "wait", "nobody", "nothing")

# What names a number the caller is about to say: "I'm calling about job number." is not the end of the turn
NUMBER_NAMES = frozenset({"number", "reference", "ref", "postcode", "zip", "code", "id", "pin", "digit"})
# how a question for a number says how many digits ("the eight-digit card number"): the count is group 1
DIGITS_COUNTED = r"\b(\d{1,2}|[a-z]+)[- ]digits?\b"
DIGIT_NOUNS = ("digit", "digits")  # what counts an identifier's digits ("the 8-digit account number")
LETTER_NOUNS = ("letter", "letters")  # and its letters ("3 letters, 5 digits")
# what makes the number before it an amount or a time, never a dictated id ("20 30 dollars", "3 30 pm"): a regular
# expression (voice/speech/caller_digits.py)
UNITS_AFTER = (r"dollars?|bucks|cents?|percent|%|pounds?|euros?|[ap]\.?m\b|o'clock|minutes?|hours?|days?"
               r"|weeks?|months?|years?")
NUMBER_SAID = r"number|no\.?"  # announces one number ("at number fourteen"): a regular expression
NUMBER_IS = ("is",)  # between a number's name and the number ("my account number is")

# ---- values read from a caller's words (loop/grounding/_heard.py, _clock.py; labelled: tests/data/values_said.tsv)
# Words that make up a request, not a value: "I want to check on my repair" holds no address, no item
REQUEST_WORDS = frozenset({
    "i", "i'm", "im", "i'd", "id", "i've", "i'll", "me", "my", "mine", "myself", "you", "your", "you're", "we",
    "our", "us", "want", "wanted", "wanna", "need", "needs", "like", "would", "could", "can", "please", "check",
    "checking", "help", "tell", "know", "hi", "hello", "hey", "thanks", "thank", "is", "are", "am", "was", "were",
    "do", "does", "did", "have", "has", "had", "get", "got", "just", "what", "what's", "whats", "when", "where",
    "which", "who", "why", "how", "there", "it's", "that's", "okay", "ok", "yes", "no", "yeah", "um", "uh",
    "calling", "call", "wondering", "looking", "see", "find", "out", "let", "it", "this", "that", "if", "so",
    "be", "will", "should", "sure", "well", "also", "again", "oh", "right", "hmm", "mm",
})
# a value's span does not start or end on these ("to", "on my"): they only join words
SPAN_JOINERS = frozenset({"to", "on", "in", "at", "for", "of", "the", "a", "an", "and", "or", "with", "about",
                          "from", "by", "some", "any", "up", "as", "into", "than"})
# a speaker taking back what they said ("order 1234, sorry, no, I mean 7788"): a regular expression
CORRECTION = r"\b(?:i mean|i meant|actually|make that|rather|correction|sorry,? no|no,? sorry|no,? wait)\b"
CURRENCY = ("dollars", "dollar", "bucks")  # what an amount in words is counted in ("twelve dollars")
# the currencies a tool's own words may name, by symbol: its confirmation writes an amount with it ("pay {amount}
# pounds" -> "pay 414 pounds", a description in pounds -> "£414"); labelled: tests/data/money_written.tsv
MONEY_SYMBOLS = {"$": ("dollar", "dollars", "bucks", "usd"), "£": ("pound", "pounds", "quid", "gbp"),
                 "€": ("euro", "euros", "eur")}
CURRENCY_CENTS = ("cents", "cent")  # and its hundredths ("twelve dollars and fifty cents": 12.5)
AMOUNT_AFTER = r"dollars?|bucks|euros?|pounds?|%|percent"  # a unit after an amount in digits: a regular expression
DAYS_SAID = ("today", "tomorrow", "tonight", "weekend")  # a day said besides weekdays and months
# a day or a time of it named in a word, which a spoken reply's facts are checked for (loop/grounding/_facts.py)
DAYS_NAMED = ("tomorrow", "tonight", "yesterday", "noon", "midnight", "weekend")
# the words around a time said besides its numbers ("half past three", "10 p.m.", "next Tuesday")
CLOCK_SAID = ("am", "pm", "a.m", "p.m", "a.m.", "p.m.", "o'clock", "next", "half", "past", "quarter")
OCLOCK = ("o'clock", "oclock")  # a whole hour ("five o'clock")
# minutes past or to an hour ("half past eight", "quarter to nine"); CLOCK_HOUR_FIRST: the hour is said before them
CLOCK_PAST, CLOCK_TO, CLOCK_PARTS, CLOCK_HOUR_FIRST = ("past",), ("to",), {"half": 30, "quarter": 15}, False
CLOCK_RANGE = ("from", "between")  # "from nine to five": two hours, no time
# a part of the day said after a time, and its half ("ten in the morning", "las siete de la tarde")
PARTS_OF_DAY = {"in the morning": "am", "in the afternoon": "pm", "in the evening": "pm", "at night": "pm",
                "tonight": "pm", "this morning": "am", "this afternoon": "pm", "this evening": "pm"}
# a part of the day said anywhere in the sentence of a bare hour: its half, and the first and last hour it holds
# ("Thursday evening, at seven" is 7 p.m.; "this morning ..., at three" holds no morning hour); clock_times.tsv
DAY_PARTS = {"morning": ("am", 5, 11), "afternoon": ("pm", 12, 6), "evening": ("pm", 4, 11), "tonight": ("pm", 5, 11),
             "night": ("pm", 6, 11)}
NAME_ASKED = r"\bname\b"  # a question that asks for a name ("What name is the booking under?")
# said of any identifier: what sets one apart is the rest of its name (`account_number`: "account")
ID_WORDS_GENERIC = ("number", "id", "no", "num", "nr", "code", "ref", "digits", "the", "my", "your")
ID_NAMED = ("number", "id", "no", "num")  # of those, the ones that name the identifier itself

# ---- naming an action to confirm it ("refund $20 on order 4567") -----------------------------------------
DETERMINERS = ("a", "an", "the", "this", "that", "its", "their", "your", "his", "her", "my", "some", "money", "all")
SETTING_VERBS = ("change", "update", "set", "move", "rename", "switch", "edit", "modify", "correct")
# the words that join a write's arguments to its action ("refund $20 on order 4567 with reason lost"): with, and,
# to, of, for; an unnamed id's thing; a yes/no argument said
ACTION_JOINS = ("with", "and", "to", "of", "for")
ACTION_ITEM = "item"
BOOLEAN_WORDS = ("no", "yes")

# ---- what the agent says --------------------------------------------------------------------------------
# Words a spoken phrase starts with, where a long first clause of an answer may be cut for the voice ("We're open
# Monday to Friday | from 8 in the morning"); not "in", "on", "by", "to": they end phrasal verbs ("check in").
PHRASE_STARTS = ("and", "but", "or", "so", "because", "from", "until", "with", "at", "for", "which", "while",
                 "where", "when", "after", "before", "unless")

HAND_OVER = "Let me get a person to help you with that. Please hold."
REPEAT_PLEASE = "Sorry, could you say that again?"
COULD_NOT_FINISH = "Sorry, I couldn't finish that just now."
HELD_YES = "Okay."  # at once to a yes while the write waits a moment to commit (the caller may go on)
DID_BUT_NOT_THE_REST = "I did {made}, but I couldn't finish the rest just now."
AND = " and "  # joins things done: "I did refund $20 and change the address"
CONFIRM = "Just to confirm: {action}?"
SAID_NO = "Okay, I haven't done that."
NO_YES_HEARD = "I haven't done that: I didn't hear a yes."
NOT_APPROVED = "I haven't done that: it wasn't approved."
KEYS_HINT = "Press 1 to confirm, or 2 to cancel."
ASK_AGAIN = "Sorry, let me ask that again: shall I {action}?"
ASKING_THIS = "I'm asking you this: shall I {action}?"  # to a question about the pending action
UNCLEAR_ASK_AGAIN = "Sorry, I need a clear answer. Shall I {action}? Please say yes or no."
UNCLEAR_KEYS = " Or press 1 for yes, 2 for no."  # added to the re-ask on a phone
SCOPE = "Sorry, I can only help with {things} here."
NO_SCOPE = "Sorry, I can't help with that here."
# A reply's first clause that says nothing by itself: held until the clause after it is checked, so a caught
# answer is never left as a bare "Yes,"
REPLY_OPENERS = frozenset({"yes", "yeah", "yep", "no", "nope", "sure", "certainly", "of course", "absolutely",
                           "okay", "ok", "alright", "all right", "right", "great", "well", "oh", "ah", "indeed",
                           "definitely", "sure thing", "good news", "unfortunately", "sorry", "i'm sorry"})
COURTESY_WORDS = frozenset({"of", "course", "happy", "glad", "to"})  # a reply's courtesy ("Of course, happy to.")
CANNOT_TELL = "I'm afraid I can't tell you that here."  # then the scope: to a question nothing here answers
CANNOT_DO = "Sorry, I can't do that: {reason}."
CANNOT_DO_PLAIN = "Sorry, I can't do that here."  # a policy rule that gives no reason
WRITE_FAILED = "I'm sorry, I couldn't {action}: it didn't go through, so nothing was changed."
WRITE_UNKNOWN = ("I'm sorry, I can't tell yet whether I managed to {action}. Please don't ask again until we've "
                 "checked, so it isn't done twice.")
ASK_FOR = "Could you tell me {things}?"
ASK_OPENER = "Sure, I can help with that."  # before the call's first question for what a tool lacks, not again
NOT_CAUGHT = "Sorry, I didn't catch that."  # before the same question asked again right after it
THE = "the {name}"  # one thing asked for: "the order number"
LABEL_COUNT = "number of {what}"  # a count asked for: "the number of seats"
LABEL_DIGITS = "{n}-digit {what}"  # an identifier of known length: "the eight-digit card number"
SEPARATOR = ", "
OR = " or "  # between the last two choices an argument has: "small, medium or large"
YOURE_WELCOME_BYE = "You're welcome. Goodbye!"
YOURE_WELCOME = "You're welcome. Is there anything else I can help with?"
ANYTHING_ELSE = "Is there anything else I can help with?"  # to "Brilliant." after an answer
WHICH_CHANGE = "Sorry, what would you like me to change?"  # a change to a write that names no new value
GREETING = "Hello, how can I help?"
# What the model is shown for an action not done (it copies these to the caller)
NOT_DONE_SAID_NO = "Okay, I have not done that, as you said no."
NOT_DONE_NO_YES = "I have not done that: I did not hear a yes."
NOBODY_ANSWERED = "Sorry, nobody could take your call right now. Please call again later."


# ---- remarks that ask for nothing (loop/grounding/remarks.py; labelled: tests/data/remarks.tsv) -------------
# thanks or goodbye: one cue, every other word among CLOSING_WORDS ("Great, thanks, that's all. Bye!")
CLOSING_CUES = frozenset({"thanks", "thank", "bye", "goodbye", "cheers"})
CLOSING_WORDS = CLOSING_CUES | frozenset({
    "you", "so", "much", "very", "that's", "thats", "that", "is", "was", "all", "it", "good", "great", "ok", "okay",
    "perfect", "brilliant", "lovely", "wonderful", "awesome", "excellent", "have", "a", "nice", "day", "for", "now",
    "your", "help", "the", "alright", "fine", "no", "nothing", "else", "i'm", "im", "done", "then", "see", "ya",
    "later", "take", "care", "appreciate", "really", "and", "oh", "right", "yes", "yeah", "many", "again", "bye-bye",
    "lot", "lots", "loads", "heaps", "bunch", "ton", "tons", "kind", "helpful", "goodnight", "night", "cool", "sweet",
    "fantastic", "amazing", "superb", "sorted", "cheerio", "all's"})
# an acknowledgement of an answer ("Brilliant.", "Oh, great.")
ACK_CUES = frozenset({"brilliant", "great", "perfect", "lovely", "wonderful", "awesome", "excellent", "good", "ok",
                      "okay", "alright", "cool", "sweet", "fantastic", "amazing", "superb", "sorted", "nice"})
ACK_WORDS = ACK_CUES | frozenset({"oh", "that's", "thats", "very", "so", "sounds", "right", "fine", "really", "all"})
FAREWELLS = frozenset({"bye", "goodbye", "bye-bye", "cheerio", "goodnight", "later", "ya"})
# a yes to something that asked nothing ("Yes, that's right." after a result was read out)
YES_CUES = frozenset({"yes", "yeah", "yep", "yup", "correct"})
YES_WORDS = YES_CUES | frozenset({"please", "that's", "thats", "right", "oh", "um", "uh", "it", "is", "sure", "great",
                                  "ok", "okay"})

# short forms in an argument's name said in full when it is asked for (`booking_ref` -> "booking reference");
# labelled: tests/data/labels.tsv
NAME_ABBREVIATIONS = {"id": "number", "no": "number", "num": "number", "nr": "number", "ref": "reference",
                      "acct": "account", "reg": "registration", "dob": "date of birth"}
# words of a name that say what it is already: no "number", "number of" or "date" is added to it
_says = {"id": {"number", "code", "reference", "postcode", "zip", "zipcode", "pin", "digits", "id", "registration",
                "plate", "iban"},
         "integer": {"number", "count", "quantity", "amount", "total", "size", "age", "price", "cost", "year",
                     "month", "day", "hour", "minute"},
         "when": {"time", "date", "day", "hour", "slot", "weekday", "night", "evening", "morning", "when"}}


def clock_text(hour: int, minute: int, half: str) -> str:
    """A time of day as a time argument holds it: "7", "7:30", "7 p.m.", "10:15 a.m."."""
    said = f"{hour}:{minute:02d}" if minute else str(hour)
    return f"{said} {half[0]}.m." if half else said


def label(name: list[str], kind: str = "", digits: int = 0, shape: tuple[int, int] = (0, 0)) -> str:
    """How a question asks for a tool's argument, from its name's words and what the grounding read of it
    (`loop.grounding._arg_kinds.label`): its `kind`, an identifier's `digits` and its `shape` (letters, digits):
    ["order", "id"] -> "order number", ["account"] (an id of 8 digits) -> "eight-digit account number", ["seats"]
    (a count) -> "number of seats". Labelled: tests/data/labels.tsv."""
    words = [NAME_ABBREVIATIONS.get(w, w) for w in name]
    if kind == "id" and not set(words) & _says["id"] and not words[-1].endswith("code"):
        words.append("digits" if set(words) & set(ONES) else "number")  # `last_four`: "the last four digits"
    letters, shaped = shape
    if 0 < letters < len(ONES) and 1 < shaped < len(ONES):  # "the file reference, three letters and five digits"
        said = "a letter" if letters == 1 else f"{ONES[letters]} letters"  # "the staff ID, a letter and five digits"
        return f"{' '.join(dict.fromkeys(words))}, {said}{AND}{ONES[shaped]} digits"
    if 1 < digits < len(ONES) and not set(words) & set(ONES):  # "the eight-digit card number": the caller knows
        # what to say, and the call how long to wait for it
        words = LABEL_DIGITS.format(n=ONES[digits], what=" ".join(words)).split()
    if kind == "integer" and not set(words) & _says["integer"]:
        words = LABEL_COUNT.format(what=" ".join(words)).split()  # `seats` -> "the number of seats"
    if kind == "when" and not set(words) & _says["when"]:
        words.append("date")
    return " ".join(dict.fromkeys(words))


def the(name: str) -> str:
    """One thing asked for, with its article: "order number" -> "the order number"."""
    return THE.format(name=name)


def as_asked(phrase: str) -> str:
    """A tool's description as a question asks it: "Refunds money for an order" -> "Refund money for an order" (a
    verb in its third person before an object, the way a docstring says it, in its base form)."""
    said = phrase.split()
    if len(said) > 1 and said[1].lower() in DETERMINERS and not said[0].isupper():  # not an acronym ("SMS the")
        said[0] = _base_form(said[0])
    return " ".join(said)


def _base_form(verb: str) -> str:
    lower = verb.lower()
    if lower.endswith(("sses", "shes", "ches", "xes", "zes")):
        return verb[:-2]
    if lower.endswith("ies") and len(lower) > 4:
        return verb[:-3] + "y"
    if lower.endswith("s") and not lower.endswith("ss"):
        return verb[:-1]
    return verb


def spoken_form() -> SpokenRules:
    """How a reply is said aloud in this language (numbers, money, times, symbols: `speak(text)`), for the voice
    (`voice.speech.spoken`); imported when a voice first needs it, not with the pack. Labelled:
    tests/data/spoken_forms.tsv."""
    from loop.locale.en._spoken import EnglishUS

    return EnglishUS()
