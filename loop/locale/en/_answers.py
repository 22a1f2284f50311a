"""English: the words of answers to a confirmation question and of questions, the approval grammar and word
stems. Part of the pack `loop.locale.en`, which exports every name here."""

from __future__ import annotations

# ---- answers to a confirmation question -----------------------------------------------------------------
# A clear yes. Said after the whole question, each of these is an answer, not a backchannel.
ANSWER_YES = (r"yes", r"yeah", r"yea", r"yep", r"yup", r"ya", r"yah", r"aye", r"sure", r"certainly", r"absolutely",
    r"definitely", r"of course", r"correct", r"that'?s right", r"that is right", r"yes,? right", r"exactly",
    r"affirmative", r"confirm(?:ed)?", r"go ahead", r"go for it", r"do it", r"do that", r"please do", r"proceed",
    r"ok(?:ay)?", r"alright", r"all right", r"sounds good", r"that works", r"let'?s do it", r"you bet",
    r"by all means", r"i do", r"will do", r"can do", r"i agree", r"agreed", r"please go ahead", r"make it so")
# Idioms holding a "no"/"not" that mean yes; read as "yes" before the refusals are looked for.
ANSWER_YES_IDIOMS = (r"no problem", r"not a problem", r"no worries", r"why not",
    r"(?:i )?(?:don'?t|do not|wouldn'?t) mind", r"no doubt")
# Backchannels and lukewarm words: the caller is listening, or not quite saying yes. Never a yes on their own.
ANSWER_WEAK = (r"go on", r"m+h?m+", r"mm+ ?hm+", r"uh[- ]?huh", r"uh[- ]?hum", r"hm+", r"fine", r"good", r"great",
    r"perfect", r"cool", r"nice", r"lovely", r"right", r"i guess", r"i suppose", r"whatever", r"if you say so",
    r"probably", r"i think so", r"please")
# Thinking aloud.
ANSWER_HESITATION = (r"hm+", r"um+ ?hm+", r"let me think", r"well+\.\.\.")
# A yes with a hedge or a condition is not a clear one ("sure, whatever", "yes, if it's free", "yeah right").
ANSWER_HEDGE = (r"whatever", r"i guess", r"i suppose", r"if you say so", r"probably", r"i think so", r"kind of",
    r"sort of", r"if", r"unless", r"as long as", r"provided", r"yeah,? right")
# Not knowing.
ANSWER_UNSURE = (r"not sure", r"(?:i )?(?:don'?t|do not) know", r"dunno", r"no idea", r"maybe", r"perhaps",
    r"not certain", r"let me think", r"i'?ll think", r"not really sure", r"possibly")
# A refusal, or any negation ("didn't", "wont" as Whisper may write it without its apostrophe).
ANSWER_NO = (r"no", r"nope", r"nah", r"not", r"\w+n't", r"(?:do|did|does|is|was|were|are|has|have|had|wo|ca|could)nt",
    r"(?:would|should|ai)nt", r"do not", r"never", r"stop", r"cancel", r"wait", r"hold on", r"hang on",
    r"one (?:moment|sec(?:ond)?|minute)", r"negative", r"wrong", r"incorrect", r"changed my mind",
    r"forget (?:it|that|about it)", r"decline", r"abort", r"leave it", r"rather not", r"nothing", r"later", r"refuse")
# Said to change what is asked ("make it thirty", "Friday instead"): back to the model with the caller's words.
ANSWER_CHANGE = (r"make (?:it|that)", r"instead", r"rather than", r"change (?:it|that|the)", r"switch", r"how about",
    r"what about", r"different", r"another", r"other one", r"swap", r"except", r"only half",
    r"actually,? (?:can|could|make|i want|i'd like|let'?s)", r"(?:can|could) you make", r"half", r"quarter",
    r"double", r"twice", r"as well", r"too", r"also")
# What a yes goes on with when it is about to change something ("yes, but ..."): more after it is a change
ANSWER_BUT = ("but",)
# A new request rather than an answer ("I'd like to speak to a person").
ANSWER_REQUEST = (r"i want", r"i'?d like", r"i need", r"i would like", r"let me", r"put me", r"transfer", r"speak to",
    r"talk to", r"connect me", r"get me")
# Asking to hear the question again.
ANSWER_REPEAT = (r"say (?:that|it) again", r"repeat", r"come again", r"pardon", r"excuse me", r"what do you mean",
    r"(?:didn'?t|did not) (?:catch|hear|get) (?:that|it|you)", r"what was (?:that|it)", r"sorry\?")
# Question words, auxiliaries that open a question, and the subjects that follow them ("is it...", "can you...").
WH = ("how", "huh", "what", "when", "where", "which", "who", "whom", "whose", "why")
AUX = ("am", "are", "can", "could", "did", "do", "does", "had", "has", "have", "is", "may", "might", "shall",
    "should", "was", "were", "will", "would")
# words before a question's first word that do not make it an answer ("oh, what time ..."): loop/grounding/_facts.py
# words a caller says for the same thing whatever the agent is for: asking when, asking how much
# (loop/grounding/_scope.py; an agent's own words for its things are its `related:`). tests/data/related.tsv
RELATED_WORDS = (frozenset({"time", "hour", "open", "close", "closing", "opening", "when"}),
                 frozenset({"price", "cost", "much", "charge", "fee", "quote", "expensive", "cheap", "pay",
                            "payment", "bill", "invoice", "owe"}))
# the word of RELATED_WORDS a line stating an amount of money is about: "The 20 GB pack is $25." answers "How much
# does the twenty gig pack cost?" (loop/grounding/_scope.py); labelled: tests/data/prompt_answers.tsv
PRICE_ASKED = "price"
QUESTION_LEAD_IN = frozenset({"oh", "um", "uh", "er", "erm", "so", "and", "but", "well", "hi", "hello", "hey", "okay",
                              "ok", "right", "sorry", "also", "then", "just"})
SUBJECTS = ("he", "i", "it", "its", "me", "my", "she", "that", "the", "there", "they", "this", "we", "you", "your")
# Words a yes may carry without saying anything more: politeness, fillers, pronouns.
FILLERS = ("a", "absolutely", "ah", "ahead", "all", "and", "appreciate", "at", "be", "brilliant", "can", "cheers",
    "course", "dear", "definitely", "do", "er", "erm", "excellent", "fine", "for", "go", "good", "great", "i", "i'd",
    "i'm", "in", "is", "it", "it's", "its", "just", "kind", "kindly", "let's", "lets", "like", "love", "lovely",
    "ma'am", "madam", "mate", "me", "much", "my", "now", "of", "oh", "ok", "okay", "on", "perfect", "please",
    "really", "right", "sir", "so", "sounds", "sure", "thank", "thanks", "that", "that's", "thats", "the", "then",
    "thing", "this", "to", "uh", "uhh", "um", "umm", "very", "we", "well", "with", "wonderful", "would", "yeah",
    "yes", "you")

# ---- the approval grammar: a yes is an answer every word of which these account for --------------------
# (voice/call/_yes_grammar.py; labelled examples: tests/data/approval_answers.tsv and the held-out sets in
# tests/data/approval_sets/). Phrases are words without apostrophes ("thats right"), matched longest first.
# A yes in itself: any one of these, said by the caller, is the go-ahead.
APPROVE_AFFIRM = ("yes", "yeah", "yea", "yep", "yup", "ya", "yah", "yeh", "aye", "sure", "sure thing", "certainly",
    "absolutely", "definitely", "of course", "course", "correct", "thats correct", "that is correct", "all correct",
    "thats all correct", "thats right", "that is right", "thats exactly right", "exactly", "exactly right",
    "affirmative", "indeed", "yes indeed", "confirm", "confirmed", "i confirm", "i confirm that", "i can confirm",
    "i can confirm that", "go ahead", "go right ahead", "go for it", "go on then", "do it", "do that",
    "please do", "proceed", "please proceed", "you can proceed", "ok", "okay", "alright", "all right", "righto",
    "right oh", "sounds good", "that sounds good", "sounds great", "sounds perfect", "sounds fine",
    "that sounds great", "sounds good to me", "that works", "that works for me", "works for me", "that suits me",
    "suits me", "thats everything", "thats all", "lets do it", "lets do that", "you bet", "by all means", "i do",
    "agreed", "i agree", "you can",
    "you may", "thats what i want", "thats what i need", "thats what i asked for", "thats what i wanted",
    "thats it", "thats the one", "thats it exactly", "thats fine", "thats good", "thats great", "thats perfect",
    "thats lovely", "thats grand", "thats all good", "all good", "thatll do", "that will do", "thatd be great",
    "that would be great", "thatd be lovely", "that would be lovely", "thatd be perfect",
    "happy with that", "im happy with that", "im good with that", "im sure",
    "for sure", "no problem", "not a problem", "no worries", "i dont mind", "dont mind", "no objection",
    "no objections", "lock it in", "book it in", "put it through", "send it through", "make it so", "will do", "can do")
# May stand beside a yes, never one alone: thanks, forms of address, praise.
APPROVE_COURTESY = ("please", "thanks", "thank you", "thank you very much", "thank you so much", "thanks a lot",
    "thanks so much", "many thanks", "cheers", "ta", "sir", "maam", "madam", "miss", "mate", "love", "dear",
    "buddy", "great", "perfect", "lovely", "brilliant", "wonderful", "excellent", "fine", "good", "cool",
    "awesome", "nice", "fantastic", "super", "grand", "splendid", "much appreciated", "appreciate it",
    "i appreciate it", "appreciated", "kindly", "very much", "so much", "oh", "ah", "now", "right now", "then",
    "just", "really", "again", "works", "is perfect", "is fine", "is good", "is great")
# Hesitations: a yes may start with one, never end on one ("um, okay, so..." is not a yes).
APPROVE_LEAD = ("um", "umm", "uh", "uhh", "er", "erm", "mm", "mmm", "mhm", "uh huh", "hmm", "well", "right", "oh",
    "ah")
# Words that restate the pending action around its own words and values ("yes, refund the $20 on it"); the
# grammar also takes the pending call's own words (its action phrase, argument names and values), by stem.
APPROVE_FRAME = ("the", "a", "an", "it", "that", "this", "them", "those", "these", "that one", "this one",
    "the one", "for", "on", "to", "at", "from", "of", "in", "with", "by",
    "and", "all", "please", "oclock", "am", "pm", "a m", "p m", "number", "i want",
    "i want to", "id like", "id like to", "i would like", "i would like to", "i need", "i need to")
# The caller's words for the agent's ("cancel your card" -> "yes, cancel my card"); the unit a "$" is said in.
OWN_WORDS = {"your": ("my",), "yours": ("mine",), "you": ("me", "i"), "youre": ("im",)}
MONEY_WORDS = ("dollars", "dollar", "bucks", "cents", "money")
# other units a number said before them is an amount in, not a time ("7.30 pounds"); labelled: clock_times.tsv
AMOUNT_UNITS = ("pounds", "pound", "euros", "euro", "percent", "pence")
# Written short forms and the words said for them: a yes may say either of what the question wrote
ABBREVIATIONS = {"mg": ("milligram", "milligrams"), "ml": ("millilitre", "milliliter", "millilitres"),
                 "apt": ("apartment",), "ave": ("avenue",), "st": ("street",), "rd": ("road",), "dr": ("drive",),
                 "blvd": ("boulevard",), "ln": ("lane",), "ct": ("court",), "pl": ("place",), "kg": ("kilos",)}
# Frame words that are the object of the action's verb: "cancel it" approves, "cancel the cancellation" undoes
OBJECT_PRONOUNS = ("it", "that", "them", "this")
# after these a courtesy word is a noun, no form of address ("yes, my love's car"); labelled: approval_sets
NOUN_MARKERS = ("my", "your", "his", "her", "their", "our", "the", "a", "an")
ENCLITICS: tuple[str, ...] = ()  # pronouns written onto a verb (Spanish "resérvala"): none in English
# A verb written onto a word ("three's good": "three is good"; "Tuesday's fine"): the word is read without it, as
# the grammar would read it said in full (a number still restates a value or is a change). Labelled:
# tests/data/approval_answers.tsv (rows with "'s").
APPROVE_CONTRACTIONS = ("'s",)
INTERJECTION_DIGITS = ("oh",)  # a digit word that alone is no number ("Oh, yes.")
# Suffixes a crude stem drops, so "booking" restates "book" and "cancellation" "cancel"; `STEM_UNDOUBLE`: a
# doubled last consonant is one ("cancelled" -> "cancel")
STEM_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ed", "es", "s", "e")
STEM_UNDOUBLE = True
# Generic verbs that may name the pending action ("yes, make the booking", "process the refund").
APPROVE_VERBS = ("do", "make", "process", "place", "submit", "send", "go ahead with", "carry on",
    "carry on with", "get", "set up", "sort", "sort out", "arrange")
# A yes does not end on these: the caller is going on ("yes, and ...", "okay, so ...").
APPROVE_GOES_ON = ("and", "but", "so", "or", "because", "if", "um", "umm", "uh", "uhh", "er", "erm", "well",
    "except", "unless", "though", "although")
