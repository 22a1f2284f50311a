"""Spanish: the words of answers to a confirmation question and of questions, the approval grammar and word
stems. Part of the pack `loop.locale.es`, which exports every name here."""

from __future__ import annotations

# ---- answers to a confirmation question (regular expressions over accent-folded words) --------------------
ANSWER_YES = (r"si", r"sip", r"claro", r"vale", r"okey", r"ok", r"de acuerdo", r"correcto", r"exacto",
    r"exactamente", r"afirmativo", r"adelante", r"dale", r"venga", r"por supuesto", r"desde luego", r"perfecto",
    r"confirmo", r"confirmado", r"hazlo", r"hagalo", r"orale", r"sale", r"andale", r"listo", r"de una", r"simon",
    r"eso es", r"asi es", r"efectivamente", r"va", r"ya")
ANSWER_YES_IDIOMS = (r"no hay problema", r"sin problema", r"como no", r"no me importa", r"por que no")
ANSWER_WEAK = (r"aja", r"mhm+", r"mm+", r"bueno", r"bien", r"ya veo", r"entiendo", r"supongo", r"creo",
    r"me imagino", r"puede ser", r"por favor")
ANSWER_HESITATION = (r"eh+", r"em+", r"este", r"pues", r"a ver", r"dejame pensar", r"dejeme pensar",
    r"o sea")
ANSWER_HEDGE = (r"supongo", r"creo", r"me imagino", r"imagino", r"quizas?", r"tal vez", r"a lo mejor",
    r"igual", r"si es", r"si no", r"siempre que", r"siempre y cuando", r"con tal de", r"mientras", r"en caso de",
    r"a menos que", r"salvo que", r"yo diria", r"diria que")
ANSWER_UNSURE = (r"no se", r"no estoy segur[oa]", r"ni idea", r"quizas?", r"tal vez", r"a lo mejor", r"no lo se",
    r"no sabria", r"lo pienso", r"dejame pensar", r"dejeme pensar", r"puede ser", r"no lo tengo claro")
ANSWER_NO = (r"no", r"nop", r"nunca", r"jamas", r"para", r"espera", r"espere", r"un momento", r"momento",
    r"cancela", r"cancele", r"mejor no", r"ni hablar", r"negativo", r"todavia no", r"aun no", r"ahora no",
    r"olvidalo", r"olvidelo", r"dejalo", r"dejelo", r"nada", r"nadie", r"tampoco", r"ningun[oa]?")
ANSWER_CHANGE = (r"mejor", r"en vez de", r"en lugar de", r"cambia", r"cambie", r"cambiar", r"cambialo",
    r"que sea", r"que sean", r"ponle", r"pongale", r"ponlo", r"pongalo", r"el otro", r"la otra", r"otr[oa]s?",
    r"distint[oa]", r"diferente", r"ademas", r"tambien", r"agrega", r"agregale", r"anade", r"suma", r"sumale",
    r"quita", r"quitale", r"mitad", r"doble")
ANSWER_BUT = ("pero", "aunque", "sino")
ANSWER_REQUEST = (r"quiero", r"quisiera", r"necesito", r"me gustaria", r"paseme", r"pasame", r"comuniqueme",
    r"hablar con", r"una persona", r"un agente")
ANSWER_REPEAT = (r"repita", r"repite", r"como dice", r"como dijo", r"perdon\?", r"no (?:le|te) (?:oi|entendi)",
    r"no escuche", r"que dijo", r"que dijiste", r"mande", r"otra vez")
# only with their accent: "que", "como", "cuando" without one are no question ("sí, que ya no me queda")
WH = ("qué", "cuál", "cuáles", "cuándo", "dónde", "cómo", "cuánto", "cuánta", "cuántos", "cuántas", "quién",
      "quiénes")
AUX = ()  # a Spanish question is not opened by an inverted auxiliary: "¿" and "?" and the question words tell
# words a caller says for the same thing whatever the agent is for: asking when, asking how much
# (loop/grounding/_scope.py; an agent's own words for its things are its `related:`). tests/data/related.tsv
RELATED_WORDS = (frozenset({"hora", "horas", "horario", "abrir", "abren", "abierto", "cerrar", "cierran", "cerrado",
                            "cuando"}),
                 frozenset({"precio", "cuesta", "cuanto", "vale", "cobrar", "cobran", "pagar", "pago", "coste",
                            "tarifa", "caro", "barato", "debo"}))
PRICE_ASKED = "precio"  # the word of RELATED_WORDS a line stating an amount of money is about (see the English pack)
QUESTION_LEAD_IN = frozenset({"eh", "oh", "ah", "pues", "y", "pero", "bueno", "oiga", "mire", "hola", "vale",
                              "entonces", "tambien", "perdone", "perdon", "una", "pregunta", "oye"})
SUBJECTS = ()
FILLERS = ("a", "ah", "al", "bien", "bueno", "claro", "con", "de", "del", "el", "eh", "en", "eso", "esto", "favor",
    "gracias", "la", "las", "lo", "los", "me", "mi", "muchas", "muy", "oh", "para", "por", "pues", "que", "se",
    "señor", "señora", "señorita", "si", "su", "te", "todo", "tu", "un", "una", "vale", "ya", "y", "es", "esta")

# ---- the approval grammar: a yes is an answer every word of which these account for --------------------
# (phrases are accent-folded words; `voice/call/_yes_grammar.py`)
APPROVE_AFFIRM = ("si", "sip", "sii", "si si", "claro", "claro que si", "claro que", "por supuesto", "desde luego",
    "vale", "okey", "ok", "oki", "de acuerdo", "correcto", "es correcto", "exacto", "exactamente", "eso es",
    "eso mismo", "asi es", "efectivamente", "afirmativo", "adelante", "dale", "venga", "va", "venga va", "hecho",
    "confirmo", "lo confirmo", "confirmado", "si confirmo", "confirmalo", "confirmela", "confirmelo", "hazlo",
    "hagalo", "hazla", "hagala", "procede", "proceda", "listo", "orale", "sale", "andale", "simon", "de una",
    "perfecto", "esta bien", "esta perfecto", "todo bien", "esta todo bien", "me parece bien", "me parece perfecto",
    "me vale", "sin problema", "no hay problema", "como no", "eso quiero", "eso es lo que quiero",
    "eso es lo que queria", "es lo que quiero", "es lo que queria", "asi esta bien", "todo correcto", "ya",
    "ya po", "dele", "hagale", "mandalo", "mandelo", "envialo", "envielo", "apuntalo", "apuntelo", "adelante con",
    "de lujo", "estupendo", "genial")
APPROVE_COURTESY = ("por favor", "porfa", "gracias", "muchas gracias", "mil gracias", "muy amable", "señor", "señora",
    "señorita", "con mucho gusto", "mucho gusto", "al tiro", "bacan", "joven", "amigo", "amiga", "bien", "muy bien",
    "perfecto", "genial", "estupendo", "guay", "bueno", "pues", "ya", "ahora", "ahora mismo", "ya mismo", "entonces",
    "oiga", "mire", "gracias a usted", "te lo agradezco", "se lo agradezco", "chevere", "bacano", "buenisimo",
    "excelente", "fenomenal")
APPROVE_LEAD = ("eh", "ehh", "em", "mm", "mmm", "aja", "mhm", "bueno", "pues", "este", "a ver", "oh", "ah")
APPROVE_FRAME = ("el", "la", "los", "las", "lo", "le", "un", "una", "unos", "unas", "eso", "esa", "ese", "esto",
    "esta", "este", "de", "del", "a", "al", "en", "para", "por", "con", "desde", "y", "que", "me", "se", "mi",
    "su", "numero", "horas", "hora", "quiero", "quisiera", "necesito")
OWN_WORDS = {"su": ("mi",), "sus": ("mis",), "usted": ("yo",), "tu": ("mi",), "tus": ("mis",)}
MONEY_WORDS = ("dolares", "dolar", "euros", "euro", "pesos", "peso", "soles", "centimos", "centavos", "plata")
AMOUNT_UNITS = ("libras", "libra")  # "7.30 libras" is no time (tests/data/clock_times.tsv)
ABBREVIATIONS = {"mg": ("miligramos", "miligramo"), "ml": ("mililitros",), "av": ("avenida",),
                 "depto": ("departamento",), "c": ("calle",), "kg": ("kilos", "kilogramos"),
                 "dr": ("doctor",), "dra": ("doctora",)}
OBJECT_PRONOUNS = ("lo", "la", "los", "las", "eso", "esto")
# after these a courtesy word is a noun, no form of address ("el auto de mi señora")
NOUN_MARKERS = ("mi", "mis", "tu", "tus", "su", "sus", "nuestro", "nuestra", "el", "la", "los", "las", "un", "una")
# pronouns written onto a verb ("resérvala", "mándaselo"): the verb is compared without them
ENCLITICS = ("selos", "selas", "selo", "sela", "melo", "mela", "telo", "tela", "noslo", "los", "las", "les", "nos",
             "lo", "la", "le", "me", "te", "se")
APPROVE_CONTRACTIONS: tuple[str, ...] = ()  # no verb is written onto another word in Spanish
INTERJECTION_DIGITS: tuple[str, ...] = ()
STEM_SUFFIXES = ("aciones", "acion", "encias", "encia", "ancias", "ancia",
                 "amientos", "amiento", "imientos", "imiento", "ando", "iendo", "ados", "adas",
                 "idos", "idas", "ado", "ada", "ido", "ida", "ar", "er", "ir", "as", "es", "os", "a", "e", "o", "s")
STEM_UNDOUBLE = False
APPROVE_VERBS = ("haz", "haga", "hacer", "realiza", "realice", "procesa", "procese", "tramita", "tramite", "mete",
    "meta", "pon", "ponga", "envia", "envie", "manda", "mande", "programa", "programe", "agenda", "agende", "reserva",
    "reserve", "pide", "pida", "pidelo", "pidalo", "adelante con", "sigue con", "siga con")
APPROVE_GOES_ON = ("y", "pero", "o", "porque", "aunque", "eh", "em", "este", "pues", "bueno", "sino", "que",
                   "excepto", "salvo", "menos")
