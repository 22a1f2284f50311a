"""English: the words that tell what a caller's words are about, what a reply may not say of itself, and how a
tool's description and its arguments' names say what they hold. Part of the pack `loop.locale.en`, which exports
every name here. Labelled examples: tests/data/topics.tsv (both languages)."""

from __future__ import annotations

import re

from loop.locale._text import unaccented

# ---- what a caller's words are about (loop/grounding/_scope.py, tool_choice.py) ----------------------------
# Words that say nothing about a topic: a caller's words made of these only are not judged out of scope
FILLER = frozenset({
    "the", "and", "for", "about", "with", "from", "into", "than", "then", "them", "they", "their", "there", "here",
    "much", "many", "some", "any", "thing", "things", "something", "anything", "question", "ask", "asking", "talk",
    "talking", "speak", "speaking", "now", "good", "great", "nice", "lovely", "really", "very", "quite", "more",
    "other", "another", "someone", "somebody", "going", "gonna", "said", "say", "mean", "think", "thought", "kind",
    "sort", "bit", "lot", "way", "today", "day", "morning", "afternoon", "evening", "guys", "sir", "madam", "maybe",
    "actually", "only", "still", "even", "ever", "never", "not", "don't", "dont", "can't", "cant",
    "isn't", "won't", "does", "doing", "done", "make", "made", "take", "give", "put", "use", "try", "all", "one",
    "two", "too", "yet", "already", "back", "long", "little", "okay", "alright", "fine", "sorry", "excuse", "who",
    "whom", "whose", "while", "look", "looks", "anyone", "anybody", "everything", "nothing", "stuff", "number",
    "happen", "happened",
})
# Words of a request that say nothing of which tool it is for ("could you tell me about ..."): four letters or
# more, the shortest word a tool is told by (loop/grounding/tool_choice.py); a day said from today is a value, not
# what a tool does ("is the post office open today?" is nothing for `bouquets_today`)
STOP_WORDS = frozenset({"about", "with", "from", "that", "this", "your", "what", "have", "they", "them", "there",
                        "their", "would", "could", "should", "will", "just", "like", "want", "please", "tell", "give",
                        "need", "today", "tomorrow", "tonight", "yesterday"})
# a caller's turn with one of these greets or thanks: never out of scope (with CLOSING_CUES, the thanks)
SALUTATIONS = frozenset({"hi", "hello", "hey", "morning", "afternoon", "evening", "howdy", "greetings", "hiya"})
# a sentence of the agent's prompt that says what it does not do ("anything but their orders"): a regular expression
NEGATIVE = r"\b(?:anything but|anything else|other than|except|not|never|no|don't|cannot|can't|won't)\b"
# a phrasal verb written as two words that is one thing ("check out" -> "checkout"): the verbs and their particles,
# regular expressions
COMPOUND_VERBS, COMPOUND_PARTICLES = r"check|log|sign|pick|drop|take|hand|print|top|pay", r"in|out|up|off|over"

# ---- the facts of a reply (loop/grounding/_facts.py) --------------------------------------------------------
# manners: a reply of these words only is no echo of a caller who said them ("Good morning." back)
SOCIAL = frozenset({"hello", "hi", "hey", "bye", "goodbye", "thanks", "thank", "you", "good", "morning", "afternoon",
                    "evening", "night", "cheers", "great", "day", "a", "have", "nice", "too", "and"})
# the caller's own person: a reply that repeats four of their words with one of these speaks as them
FIRST_PERSON = frozenset({"i", "i'd", "i'm", "i've", "i'll", "my", "me", "mine", "myself"})

# ---- what a reply may not say (loop/grounding/speakable.py) ---------------------------------------------------
# a reply that talks about the conversation instead of to the caller ("the caller", "this response indicates"):
# a regular expression, matched ignoring case
META_TALK = (r"\bthe (?:caller|user)\b|\bhere(?:'s| is) (?:a|the|my) (?:response|reply|answer|result|output)\b"
             r"|\b(?:this|the|that) (?:response|result|output|data) (?:indicates|shows|says|means|suggests)\b"
             r"|\b(?:tool|function)(?:'s)? (?:responses?|results?|outputs?|calls?)\b")

# ---- naming an action to confirm it (voice/call/approval.py) ------------------------------------------------
# what a tool's description calls the money an action moves ("refunds the money for an order"), which the
# question says as the amount ("refund $20 for order 4567"): a regular expression
MONEY_NAMED = r"\b(?:(?:some|the|an?)\s+)?(?:money|amount|funds|payment)\b"

# ---- what a tool's description says an argument is (loop/grounding/_arg_kinds.py) ----------------------------
# the argument is an identifier ("the booking reference"), not a count of things ("the number of nights")
ID_DESCRIBED = r"\b(?:number|digits?|code|reference|id|identifier)\b(?!\s+of\b)"
# the word an identifier is called by, before its noun ("by its ticket number"): group 1
ID_CALLED = r"\b([a-z]+)[ -](?:number|code|reference|ref|id)\b"
# the argument counts ("how many seats", "the number of nights")
COUNT_DESCRIBED = r"\bhow many\b|\bnumber of\b|\bamount\b|\bcount\b"
# a line of the agent's prompt that lists what it is not for ('anything else (the weather): "Sorry, ..."')
ELSE_LISTED = r"\b(?:anything|everything) else\b|\banything but\b|\bother than\b|\bout of scope\b"
# The words of an argument's name that say what it holds (`pet_name`, `last_four`, `check_in`): code is written
# in English whatever the agent speaks, so these hold for every language (`loop.locale.argument_names`); another
# pack adds its own words to them
ARGUMENT_NAMES = {
    "id": ("id", "number", "num", "no", "nr", "ref", "reference", "code", "postcode", "zip", "zipcode", "digits",
           "pin", "postal", "iban", "serial", "registration", "reg", "plate", "tracking", "phone", "mobile",
           "telephone"),
    "count": ("of", "count", "size", "amount", "total", "quantity", "qty", "guests", "people", "nights", "adults",
              "children", "price", "cost", "age", "minutes", "hours", "days"),
    "counted": ("number", "count", "num"),  # of a count's name, the words that name no thing it counts (`num_seats`)
    "person": ("name", "person", "guest", "customer", "patient", "caller", "contact", "surname", "firstname",
               "lastname", "fullname", "owner", "client", "driver"),
    "name": ("name",),  # of the person words, those that say "name" of anything ("pizza_name" is no person's)
    "free": ("reason", "note", "notes", "message", "comment", "comments", "details", "description", "issue",
             "problem", "fault", "complaint", "request", "query", "question", "summary", "topic", "symptom",
             "symptoms", "feedback", "instructions", "text", "remarks", "subject", "concern", "why", "what"),
    "when": ("time", "hour", "date", "day", "when", "slot", "arrival", "departure", "checkin", "checkout", "weekday",
             "night", "evening", "morning"),
}

# ---- a word as the root its forms share (loop/grounding/_scope.py; labelled: tests/data/verb_forms_es.tsv) ----
# verbs said for the same action, read as the first (Spanish "anular" as "cancelar"): English reads each as said
SAME_ACTION: tuple[tuple[str, ...], ...] = ()


def word_root(word: str) -> str:
    """A word as the root its forms share, which `stem` then cuts (Spanish "anúleme" -> "cancel"): English's is the
    word as written, accents folded ("booking" stays "booking"; `loop.grounding._heard.stem` makes it "book")."""
    return unaccented(word)


def verb_keys(word: str, said: bool = True) -> frozenset[str]:
    """What a word names a tool's verb by (`loop.grounding.tool_choice.named_writes`): a said word itself or its
    -s/-ed form ("can you report it?", "reports" name `report_outage`; "booking" does not name `book_room`); a
    tool name's word by itself."""
    word = unaccented(word)
    return frozenset({word, re.sub(r"(?<=\w\w)(e?d|s)$", "", word)} if said else {word})
# What leads a prompt's line listing facts for the agent to tell ("What you may tell callers without a tool: ...;
# ..."): each fact after the colon is a reply (loop/grounding/speakable.py told_facts; tests/loop/grounding/
# test_spoken_check.py).
TOLD_FACTS_LEAD = r"tell|say"
