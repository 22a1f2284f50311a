"""Spanish: the words that tell what a caller's words are about, what a reply may not say of itself, and how a
tool's description and its arguments' names say what they hold. Part of the pack `loop.locale.es`, which exports
every name here. Words are accent-folded where the readers fold them (tests/data/topics.tsv)."""

from __future__ import annotations

# ---- what a caller's words are about (loop/grounding/_scope.py, tool_choice.py) ----------------------------
FILLER = frozenset({
    "el", "la", "los", "las", "del", "para", "por", "sobre", "con", "desde", "entre", "hasta", "algo", "alguien",
    "cosa", "cosas", "nada", "pregunta", "preguntar", "hablar", "ahora", "bien", "muy", "mucho", "mucha", "muchos",
    "muchas", "poco", "otro", "otra", "otros", "otras", "mas", "pero", "tambien", "todavia", "nunca", "siempre",
    "hoy", "dia", "manana", "tarde", "noche", "senor", "senora", "señor", "señora", "quizas", "solo", "decir",
    "dicho", "creo", "pienso", "hacer", "hace", "dar", "poner", "usar", "todo", "todos", "uno", "dos", "ya", "vale",
    "perdon", "disculpe", "numero", "pasar", "paso", "esto", "eso", "aqui", "alli", "quien", "quienes", "pueda",
    "puedan", "pregunto",
})
STOP_WORDS = frozenset({"sobre", "desde", "para", "este", "esta", "esto", "estos", "estas", "usted", "ustedes",
                        "quiero", "queria", "quisiera", "necesito", "puede", "podria", "favor", "tengo", "tiene",
                        "tienen", "como", "cuando", "donde", "pero", "porque", "decir", "saber", "algo", "todo",
                        "solo", "tambien", "ahora", "aqui", "cual", "quien", "hola", "gracias", "ayer", "anoche",
                        "manana"})  # a day said from today ("hoy" is under four letters) is a value, not a topic
SALUTATIONS = frozenset({"hola", "buenas", "buenos", "saludos", "alo"})
NEGATIVE = (r"\b(?:cualquier otra cosa|otra cosa|nada m[aá]s|salvo|excepto|no|nunca|jam[aá]s|tampoco|"
            r"ning[uú]n|ninguna)\b")
COMPOUND_VERBS, COMPOUND_PARTICLES = "", ""  # no phrasal verbs to join

# ---- the facts of a reply (loop/grounding/_facts.py) --------------------------------------------------------
SOCIAL = frozenset({"hola", "buenas", "buenos", "buen", "dia", "dias", "tardes", "noches", "adios", "chao",
                    "gracias", "muchas", "hasta", "luego", "igualmente", "que", "tenga", "usted", "y", "a", "le",
                    "muy", "amable", "tambien"})
FIRST_PERSON = frozenset({"yo", "mi", "mis", "me", "mio", "mia", "mios", "mias", "conmigo"})

# ---- what a reply may not say (loop/grounding/speakable.py) ---------------------------------------------------
META_TALK = (r"\b(?:el usuario|la usuaria|la persona que llama|quien llama)\b"
             r"|\baqu[ií] (?:est[aá]|tiene) (?:la|mi|una) (?:respuesta|resultado|salida)\b"
             r"|\b(?:esta|esa|la) (?:respuesta|salida) (?:indica|muestra|dice|significa)\b"
             r"|\b(?:este|ese|el) (?:resultado|dato) (?:indica|muestra|dice|significa)\b"
             r"|\b(?:respuesta|resultado|salida|llamada)s? de (?:la|una) (?:herramienta|funci[oó]n)\b")

# ---- naming an action to confirm it (voice/call/approval.py) ------------------------------------------------
MONEY_NAMED = r"\b(?:(?:el|un|su)\s+)?(?:dinero|importe|pago)\b"

# ---- what a tool's description says an argument is (loop/grounding/_arg_kinds.py) ----------------------------
# a code, a reference or the number of a thing that has one ("número de reserva"); "número de noches" counts
ID_DESCRIBED = (r"\b(?:c[oó]digo|referencia|localizador|identificador|n[uú]mero de (?:reserva|pedido|cliente|socio|"
                r"cuenta|tarjeta|p[oó]liza|seguimiento|expediente|factura|tel[eé]fono))\b")
# the word an identifier is called by, after its noun ("por su número de reserva"): group 1
ID_CALLED = r"\b(?:n[uú]mero|c[oó]digo|referencia|localizador)(?: de(?:l| la)?)? ([a-z]+)\b"
COUNT_DESCRIBED = r"\bcu[aá]nt[oa]s\b|\bcantidad\b"
ELSE_LISTED = r"\bcualquier otra cosa\b|\b(?:todo|nada) lo dem[aá]s\b|\bfuera de(?:l)? (?:alcance|[aá]mbito)\b"
# the words of an argument's name besides English's (`numero_reserva`, `nombre_cliente`, `fecha_recogida`)
ARGUMENT_NAMES = {
    "id": ("numero", "codigo", "referencia", "localizador", "dni", "nif", "nie", "matricula", "telefono", "movil",
           "postal", "seguimiento", "expediente", "poliza", "nro"),
    "count": ("cantidad", "personas", "noches", "adultos", "ninos", "huespedes", "invitados", "precio", "importe",
              "edad", "minutos", "horas", "dias", "plazas", "unidades"),
    "counted": ("numero", "cantidad", "nro"),
    "person": ("nombre", "cliente", "paciente", "titular", "contacto", "apellido", "apellidos", "huesped",
               "conductor", "propietario", "socio", "mascota"),
    "name": ("nombre",),
    "free": ("motivo", "nota", "notas", "mensaje", "comentario", "comentarios", "detalles", "descripcion",
             "problema", "averia", "queja", "consulta", "pregunta", "resumen", "tema", "sintoma", "sintomas",
             "instrucciones", "texto", "asunto"),
    "when": ("hora", "fecha", "dia", "cuando", "franja", "llegada", "salida", "entrada", "turno", "noche",
             "tarde", "manana"),
}
# Lo que introduce una línea del prompt con datos que el agente puede decir ("Puedes decir a quien llame: ...; ...").
TOLD_FACTS_LEAD = r"decir|contar|informar"
