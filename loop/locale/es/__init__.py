"""Spanish (Spain and Latin America): the words a caller's meaning is read from, and every fixed sentence the agent
says. The same names as `loop.locale.en`; what differs is the language, not the structure.

Words are written without accents where they are compared: answers are read accent-folded ("sí" and "si" are
one word to the readers, as speech-to-text writes either). The labelled answers this pack's approval words are
measured on: tests/data/approval_sets/es_{dev,test}_answers.tsv.
"""

from __future__ import annotations

import re

from loop.locale._text import SpokenRules, unaccented

# the words of answers and questions, and the approval grammar: in a module of their own
from loop.locale.es._answers import *  # noqa: F403  (every name there is the pack's)

# numbers: their words, and numbers said in words written in digits ("veintiocho" -> 28): in their own too
from loop.locale.es._numbers import *  # noqa: F403
from loop.locale.es._numbers import HUNDREDS, ONES, ORDINAL_WORDS, TENS, THOUSAND, TWENTIES

# what a caller's words are about, what a reply may not say, what names an argument: in their own too
from loop.locale.es._topics import *  # noqa: F403

# a word as the root its forms share ("anúleme", "cancelar" -> "cancel"): in a module of its own
from loop.locale.es._verbs import SAME_ACTION, verb_keys, word_root  # noqa: F401  (the pack's)

LANGUAGE = "es"

# One number word as a transcript writes it, with its accent or without: "dieciséis", "veintitrés", "séptimo",
# "primera", "doscientos" (a regular expression; labelled: tests/data/number_words.tsv)
_ACCENTED = {"a": "[aá]", "e": "[eé]", "i": "[ií]", "o": "[oó]", "u": "[uú]"}
NUMBER_WORD = "(?:" + "|".join(sorted({re.sub("[aeiou]", lambda m: _ACCENTED[m[0]], w) for w in (
    *ONES, *TENS[2:], *TWENTIES, *HUNDREDS, THOUSAND, *ORDINAL_WORDS)}, key=len, reverse=True)) + ")"
CAPITAL_WORDS = frozenset({"DNI", "NIE", "NIF", "CP", "OK", "ID", "PIN", "IBAN", "RUT", "CURP", "RFC", "AM", "PM"})
DIGIT_HOMOPHONES: dict[str, str] = {}  # Whisper writes Spanish digits as digits or their words
REPEATED_DIGIT = {"doble": 2, "triple": 3}
# Whisper base writes a Spanish digit said alone as its word ("Siete", "DOS"); made to write a digit token it picks
# a wrong one ("siete" as 4, "seis" as 5): a dictated id is read again by the digit words (_island_words.py)
DIGIT_ALONE_AS_WORD = True
# a call's vocabulary before Whisper's transcript: in a Spanish sentence, each word capitalised; a bare capitalised
# list made callers come out as one ("Hola, Quemilla, Reserva, Cajas"). Word error over the farmacia example's and
# agents_es dev's 56 lines (beam 3): list 0.397, this 0.391; the words as written (lower case) 0.370, but then
# "ibuprofeno" came out "ibuprofelo" in the example's reservar_si and names in lower case
VOCABULARY_PROMPT, VOCABULARY_CAPITALS = "Hola, buenas. Hablamos de {words}.", True
# a turn keeps 0.3 s before its detected onset: Silero rises late on a first /s/ ("Sí", "Se", "Sábado"), and with the
# call's 0.1 s Whisper base heard "Sí, es el 50 y 8" as "C, S, el 50 y 8" and "¿Qué horario" as "que odio" (the
# farmacia example's lines cut at their onset: 0.1 s lost the first word in 2 of 3, 0.3 s in none)
ONSET_PREROLL_S = 0.3

# ---- the calendar ---------------------------------------------------------------------------------------
WEEKDAYS = ("lunes", "martes", "miercoles", "jueves", "viernes", "sabado", "domingo")
MONTHS = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
          "noviembre", "diciembre")
TIME_WORDS = ("manana", "hoy", "esta noche", "mediodia", "medianoche", "la semana que viene", "fin de semana",
              "pasado manana", "tarde")
AMBIGUOUS_MONTHS = frozenset()
DATE_JOINERS = ("de", "del")  # between a day and its month ("el cinco de agosto")
DAY_ARTICLE = "el"  # before a day of the month said alone ("el primero")
# before an example of a value in a description ("como 1234 BCD"): a regex
EXAMPLE_LEAD = r"como|p\. ?ej\.,?|por ejemplo"


def article_for(article: str, value: str) -> str | None:
    """Spanish articles agree with the noun's gender, not its sound: a template's own article stays (None)."""
    return None


def ordinal_digits(n: int) -> str:
    """1 -> "1º": a day of the month said as an ordinal, written in digits."""
    return f"{n}º"


def date_text(month: int, day: int) -> str:
    """A calendar date as a date argument holds it: "5 de agosto"."""
    return f"{day} de {MONTHS[month - 1]}"
CLOCK_WORDS = {"mediodia": "12 pm", "medianoche": "12 am"}
NOT_A_NUMBER = r"\b(?:(?:el|la|ese|esa|este|esta|cual|ningun|ninguna|cada) (?:uno|una)|un momento|un segundo)\b"

# ---- turn taking ----------------------------------------------------------------------------------------
BACKCHANNELS = frozenset({"aja", "mhm", "mm", "ajam", "si", "vale", "ya", "claro", "ok", "okey", "bueno", "eh", "ah",
                          "oh", "ajá", "sí", "este", "pues", "ya veo", "entiendo"})
GREETING_WORDS = frozenset({"hola", "buenas", "buenos", "dias", "tardes", "noches", "alo", "bueno", "si", "oiga",
                            "mire", "eh", "este", "pues", "que", "tal"})
GREETINGS = frozenset({"hola", "buenas", "buenos", "alo"})
TRAILING = frozenset({
    "un", "una", "el", "la", "los", "las", "y", "o", "pero", "porque", "que", "si", "de", "del", "a", "al", "en",
    "con", "sin", "para", "por", "sobre", "entre", "hasta", "desde", "mi", "mis", "tu", "su", "sus", "nuestro",
    "este", "esta", "ese", "esa", "es", "son", "era", "fue", "estoy", "tengo", "tiene", "quiero", "queria",
    "quisiera", "necesito", "puedo", "puede", "podria", "voy", "como", "cuando", "donde", "eh", "em",
    "pues", "bueno", "o sea", "tambien", "solo", "nada", "mas"
})
# "nombre de" without its "a" too (Whisper drops it: "..., nombre de lusia fernandez"), never after an article or a
# possessive ("el nombre de la farmacia"); labelled: tests/data/own_name_es.tsv, introduced_names_es.tsv
SELF_INTRODUCTION = (r"\b(?:me llamo|mi nombre es|soy|habla|le habla|a nombre de|esta a nombre de|"
                     r"(?<!el )(?<!un )(?<!su )(?<!mi )(?<!tu )nombre de|"
                     r"la reserva esta a nombre de)\s+")
CASED_LEADS = ("soy", "habla", "le habla")  # "soy yo otra vez", "habla con ella": a name only when capitalised
CLOCK_CUES = ("a las", "a la", "sobre las", "hacia las", "antes de las", "despues de las", "desde las", "hasta las")
ADDRESS_STARTS = ("piso", "depto", "departamento", "apartamento", "numero", "portal", "casa")
STREET_TYPES = ("calle", "avenida", "av", "paseo", "plaza", "camino", "carretera", "ronda", "pasaje", "callejon",
                "bulevar", "travesia", "glorieta", "jiron", "carrera", "diagonal", "transversal")
NAME_LEAD = (r"^(?:(?:si|bueno|pues|vale|ok|okey|eh+|este|mire|claro)\b[,.]?\s*)*(?:(?:es|me llamo|mi nombre es|"
             r"se llama|soy|a nombre de|para|el nombre es)\b[,.]?\s*)*")
NOT_A_NAME = ("perdon", "disculpe", "hola", "gracias", "porfa", "adios", "espere", "nadie", "nada", "oiga")
NUMBER_NAMES = frozenset({"numero", "referencia", "codigo", "id", "pin", "localizador", "pedido", "poliza",
                          "cuenta", "tarjeta", "postal"})
DIGITS_COUNTED = r"\bde (\d{1,2}|[a-z]+) cifras?\b"  # "el número de reserva, de cinco cifras"
DIGIT_NOUNS = ("cifra", "cifras", "digito", "digitos")  # "de cinco cifras"
LETTER_NOUNS = ("letra", "letras")  # "tres letras y cinco cifras"
UNITS_AFTER = (r"euros?|d[oó]lares|d[oó]lar|pesos?|c[eé]ntimos?|centavos?|por ?ciento|%|libras?|[ap]\.?m\b|"
               r"en punto|minutos?|horas?|d[ií]as?|semanas?|mes(?:es)?|a[nñ]os?")
NUMBER_SAID = r"n[uú]mero|nº|nro\.?"  # "el número catorce"
NUMBER_IS: tuple[str, ...] = ()  # no digit homophones (DIGIT_HOMOPHONES) for an announced number to allow

# ---- values read from a caller's words (accent-folded; labelled: tests/data/values_said.tsv) ---------------
REQUEST_WORDS = frozenset({
    "yo", "me", "mi", "mis", "usted", "ustedes", "tu", "te", "nos", "nuestro", "nuestra", "quiero", "queria",
    "quisiera", "necesito", "necesitaria", "puedo", "puede", "podria", "por", "favor", "hola", "buenas", "gracias",
    "es", "son", "esta", "estoy", "tengo", "tiene", "tienen", "tienes", "hay", "que", "como", "cuando", "donde", "cual",
    "quien",
    "si", "no", "vale", "bueno", "pues", "eh", "ver", "saber", "llamo", "llamaba", "consultar", "preguntar",
    "mirar", "comprobar", "ayuda", "ayudar", "decir", "solo", "tambien", "oiga", "mire", "ok", "claro", "ya",
})
SPAN_JOINERS = frozenset({"a", "al", "de", "del", "en", "con", "para", "por", "el", "la", "los", "las", "un", "una",
                          "unos", "unas", "y", "o", "sobre", "desde", "hasta", "entre", "sin"})
CORRECTION = r"\b(?:quiero decir|queria decir|digo|perdon,? no|no,? perdon|mejor dicho|en realidad|corrijo)\b"
CURRENCY = ("euros", "euro", "dolares", "dolar", "pesos", "peso")
# the currencies a tool's own words may name, by symbol (see the English pack); labelled: tests/data/money_written.tsv
MONEY_SYMBOLS = {"€": ("euro", "euros", "eur"), "$": ("dolar", "dolares", "dólar", "dólares", "peso", "pesos", "usd"),
                 "£": ("libra", "libras", "gbp")}
CURRENCY_CENTS = ("centimos", "centimo", "centavos", "centavo")
AMOUNT_AFTER = r"euros?|d[oó]lares|d[oó]lar|pesos?|libras?|%|por ?ciento"
DAYS_SAID = ("hoy", "mañana", "noche", "finde", "semana")  # "esta noche", "el fin de semana" ("ñ" is kept)
DAYS_NAMED = ("mañana", "anoche", "ayer", "mediodia", "medianoche", "finde")
CLOCK_SAID = ("am", "pm", "a.m", "p.m", "a.m.", "p.m.", "en", "punto", "y", "media", "cuarto", "menos", "proximo",
              "proxima")
OCLOCK = ("en punto",)  # "las cinco en punto"
# "las ocho y media", "las nueve menos cuarto", "las seis y veinticinco": the hour first, then its minutes
CLOCK_PAST, CLOCK_TO, CLOCK_PARTS, CLOCK_HOUR_FIRST = ("y",), ("menos",), {"media": 30, "cuarto": 15}, True
CLOCK_RANGE = ("entre",)  # "entre cinco y diez": two numbers, no time
# a part of the day said after a time, and its half ("ten in the morning", "las siete de la tarde")
PARTS_OF_DAY = {"de la mañana": "am", "por la mañana": "am", "de la tarde": "pm", "por la tarde": "pm",
                "de la noche": "pm", "por la noche": "pm", "esta tarde": "pm", "esta noche": "pm"}
# a part of the day said anywhere in the sentence of a bare hour: its half, and the first and last hour it holds
# ("el jueves por la tarde, a las siete" es las 19:00); clock_times.tsv
DAY_PARTS = {"por la mañana": ("am", 5, 11), "esta mañana": ("am", 5, 11), "por la tarde": ("pm", 12, 8),
             "esta tarde": ("pm", 12, 8), "por la noche": ("pm", 8, 11), "esta noche": ("pm", 7, 11)}
NAME_ASKED = r"\bnombre\b"  # "¿A nombre de quién?"
# said of any identifier: what sets one apart is the rest of its name (`account_number`: "account")
ID_WORDS_GENERIC = ("numero", "id", "no", "num", "nro", "codigo", "ref", "cifras", "digitos", "el", "la", "mi",
                    "su", "de")
ID_NAMED = ("numero", "id", "no", "num", "nro")

# ---- naming an action to confirm it ----------------------------------------------------------------------
DETERMINERS = ("un", "una", "el", "la", "los", "las", "este", "esta", "ese", "esa", "su", "sus", "mi", "mis", "tu")
SETTING_VERBS = ("cambiar", "actualizar", "poner", "mover", "modificar", "corregir", "renombrar")
ACTION_JOINS = ("con", "y", "a", "de", "para")
ACTION_ITEM = "artículo"
BOOLEAN_WORDS = ("no", "sí")

# ---- what the agent says --------------------------------------------------------------------------------
PHRASE_STARTS = ("y", "pero", "o", "porque", "desde", "hasta", "con", "a las", "para", "que", "mientras",
                 "donde", "cuando", "despues", "antes", "salvo")

HAND_OVER = "Le paso con una persona que le ayudará. Un momento, por favor."
REPEAT_PLEASE = "Perdone, ¿me lo puede repetir?"
COULD_NOT_FINISH = "Lo siento, no he podido terminarlo ahora mismo."
HELD_YES = "De acuerdo."  # al momento, a un sí, mientras la escritura espera un instante
DID_BUT_NOT_THE_REST = "He hecho esto: {made}, pero no he podido terminar lo demás ahora mismo."
AND = " y "
CONFIRM = "Solo para confirmar: ¿{action}?"
SAID_NO = "De acuerdo, no lo he hecho."
NO_YES_HEARD = "No lo he hecho: no he oído un sí."
NOT_APPROVED = "No lo he hecho: no se ha aprobado."
KEYS_HINT = "Pulse 1 para confirmar o 2 para cancelar."
ASK_AGAIN = "Perdone, se lo pregunto otra vez: ¿{action}?"
ASKING_THIS = "Le pregunto esto: ¿{action}?"
UNCLEAR_ASK_AGAIN = "Perdone, necesito una respuesta clara: ¿{action}? Diga sí o no, por favor."
UNCLEAR_KEYS = " O pulse 1 para sí, 2 para no."
SCOPE = "Lo siento, aquí solo puedo ayudarle con {things}."
NO_SCOPE = "Lo siento, con eso no puedo ayudarle aquí."
REPLY_OPENERS = frozenset({"si", "sí", "no", "claro", "por supuesto", "vale", "bueno", "bien", "perfecto", "pues",
                           "desde luego", "lo siento", "lamentablemente", "de acuerdo", "ah", "oh", "ok"})
COURTESY_WORDS = frozenset({"por", "supuesto", "encantado", "encantada", "con", "gusto", "claro", "desde", "luego"})
CANNOT_TELL = "Me temo que eso no se lo puedo decir aquí."
CANNOT_DO = "Lo siento, no puedo hacerlo: {reason}."
CANNOT_DO_PLAIN = "Lo siento, eso no puedo hacerlo por aquí."  # una regla sin motivo
WRITE_FAILED = "Lo siento, no he podido {action}: no se ha completado, así que no se ha cambiado nada."
WRITE_UNKNOWN = ("Lo siento, todavía no sé si he podido {action}. No lo pida otra vez hasta que lo comprobemos, "
                 "para que no se haga dos veces.")
ASK_FOR = "¿Me puede decir {things}?"
ASK_OPENER = "Claro, le ayudo con eso."
NOT_CAUGHT = "Perdone, no le he entendido."
THE = "{name}"  # the article is the noun's (`the`)
# nouns ending in -a that are masculine ("el día", "el problema"): what `the` knows beyond the endings
MASCULINE_IN_A = frozenset({"dia", "mapa", "problema", "programa", "sistema", "tema", "idioma", "clima", "planeta",
                            "sofa", "mediodia"})
FEMININE_IN_E = frozenset({"noche", "tarde", "calle", "clase", "llave", "parte", "fuente", "gente", "frase"})
COMMON_GENDER = ("ista",)  # "el/la turista": asked for in the masculine, the plural's generic ("los turistas")
LABEL_COUNT = "el número de {what}"  # "¿Me puede decir el número de cajas?"
LABEL_DIGITS = "{what}, de {n} cifras"
SEPARATOR = ", "
OR = " o "
YOURE_WELCOME_BYE = "De nada. ¡Hasta luego!"
YOURE_WELCOME = "De nada. ¿Le puedo ayudar en algo más?"
ANYTHING_ELSE = "¿Le puedo ayudar en algo más?"
WHICH_CHANGE = "Perdone, ¿qué quiere que cambie?"
GREETING = "Hola, ¿en qué le puedo ayudar?"
NOT_DONE_SAID_NO = "De acuerdo, no lo he hecho, porque ha dicho que no."
NOT_DONE_NO_YES = "No lo he hecho: no he oído un sí."
NOBODY_ANSWERED = "Lo siento, ahora mismo nadie puede atenderle. Por favor, llame más tarde."

# ---- remarks that ask for nothing (loop/grounding/remarks.py; labelled: tests/data/remarks_es.tsv) ----------
CLOSING_CUES = frozenset({"gracias", "adios", "chao", "chau", "agradezco", "agradecido", "agradecida"})
CLOSING_WORDS = CLOSING_CUES | frozenset({
    "muchas", "muchisimas", "mil", "muy", "amable", "eso", "es", "era", "todo", "nada", "mas", "vale", "perfecto",
    "perfecta", "bien", "genial", "estupendo", "hasta", "luego", "pronto", "manana", "buen", "buenas", "buenos", "dia",
    "dias", "tarde", "tardes", "noche", "noches", "que", "tenga", "le", "lo", "vaya", "usted", "a", "ti", "si", "ok",
    "okey", "bueno", "listo", "de", "acuerdo", "entonces", "pues", "por", "su", "ayuda", "igualmente", "un", "saludo",
    "saludos", "nos", "vemos", "ya", "esta", "seria", "señorita", "señor", "oiga", "ah", "oh", "y", "otra", "vez"})
ACK_CUES = frozenset({"perfecto", "perfecta", "genial", "estupendo", "vale", "ok", "okey", "listo", "excelente",
                      "fantastico", "entendido", "bien"})
ACK_WORDS = ACK_CUES | frozenset({"ah", "oh", "pues", "muy", "que", "bueno", "entonces", "eso", "es", "de", "acuerdo",
                                  "ya", "veo", "claro"})
FAREWELLS = frozenset({"adios", "chao", "chau", "luego", "pronto", "vemos", "saludos"})
YES_CUES = frozenset({"si", "claro", "correcto", "exacto", "efectivamente"})
YES_WORDS = YES_CUES | frozenset({"por", "favor", "es", "eso", "asi", "vale", "bueno", "ok", "pues", "ah", "oh", "eh",
                                  "mm", "esta", "bien", "que"})


def as_asked(phrase: str) -> str:
    """A tool's description as a question asks it: as it is ("Reserva cajas de un medicamento" reads the same in a
    confirmation's question, `CONFIRM`)."""
    return phrase


NAME_ABBREVIATIONS: dict[str, str] = {}  # an argument's name is said as its author wrote it (tests/data/labels.tsv)


def label(name: list[str], kind: str = "", digits: int = 0, shape: tuple[int, int] = (0, 0)) -> str:
    """How a question asks for a tool's argument: its name's words as its author wrote them (`numero_reserva` ->
    "numero reserva"), said by `LABEL_COUNT` for a count and `LABEL_DIGITS` for an identifier of known length
    (`shape`, its letters and digits, is not said). Labelled: tests/data/labels.tsv."""
    what = " ".join(NAME_ABBREVIATIONS.get(w, w) for w in name)
    if kind == "integer":
        return LABEL_COUNT.format(what=what)
    if 1 < digits < len(ONES):
        return LABEL_DIGITS.format(what=what, n=ONES[digits])
    return what


def the(name: str) -> str:
    """One thing asked for, with its article ("servicio" -> "el servicio", "dirección" -> "la dirección", "cajas"
    -> "las cajas"): by the first noun's ending, `MASCULINE_IN_A` and `FEMININE_IN_E` the exceptions (labelled:
    tests/data/articles_es.tsv); a label that has its article already ("el número de cajas") is kept."""
    first = name.split()[0] if name.split() else ""
    bare = unaccented(first.lower())
    if not bare or bare in {"el", "la", "los", "las", "un", "una"}:
        return name
    # a plural: a vowel and s ("cajas"), or a consonant and es ("meses", "ciudades"); "mes", "país" are one
    plural = bare.endswith("s") and not bare.endswith(("is", "us")) and (not bare.endswith("es") or len(bare) >= 5)
    single = bare if not plural else bare[:-2] if bare.endswith("es") and bare[-3] in "dnrlzsj" else bare[:-1]
    feminine = single in FEMININE_IN_E or (single.endswith(("a", "ion", "dad", "tad", "tud", "umbre"))
                                           and single not in MASCULINE_IN_A and not single.endswith(COMMON_GENDER))
    article = ("las" if feminine else "los") if plural else ("la" if feminine else "el")
    return f"{article} {name}"


def spoken_form() -> SpokenRules:
    """How a reply is said aloud in this language (numbers, money, times, symbols: `speak(text)`), for the voice
    (`voice.speech.spoken`); imported when a voice first needs it, not with the pack. Labelled:
    tests/data/spoken_forms.tsv."""
    from loop.locale.es._spoken import SpanishES

    return SpanishES()
