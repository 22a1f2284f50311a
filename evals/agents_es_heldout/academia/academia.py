"""Academia Babel's office line, in Spanish: a language course's group (days and hours, monthly price, places left)
by language and level; a student's enrolment looked up by their six-digit student number; a new student enrolled in
a group under their full name (after a yes); a student withdrawn by their student number (after a yes). Everything
lives in memory, a fresh copy for each call (`build` makes a new `Academia`).

    voiceloop serve --agent evals/agents_es_heldout/academia/academia.py:build --llm local
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Annotated, Any, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import identifier, person_name

Idioma = Literal["inglés", "francés", "alemán", "italiano", "chino"]
Nivel = Literal["básico", "intermedio", "avanzado"]
NumeroAlumno = Annotated[str, identifier(digits=6)]

# (language, level) -> days and hours, monthly price in euros, places left
GRUPOS: dict[tuple[str, str], tuple[str, int, int]] = {
    ("inglés", "básico"): ("lunes y miércoles de 6 a 7 y media de la tarde", 60, 4),
    ("inglés", "intermedio"): ("martes y jueves de 7 a 8 y media de la tarde", 60, 0),
    ("inglés", "avanzado"): ("viernes de 5 a 8 de la tarde", 65, 2),
    ("francés", "básico"): ("martes y jueves de 10 a 11 y media de la mañana", 55, 6),
    ("francés", "intermedio"): ("lunes y miércoles de 7 a 8 y media de la tarde", 55, 3),
    ("alemán", "básico"): ("lunes y miércoles de 7 a 8 y media de la tarde", 70, 5),
    ("alemán", "intermedio"): ("martes y jueves de 6 a 7 y media de la tarde", 70, 1),
    ("italiano", "básico"): ("viernes de 6 a 9 de la tarde", 50, 8),
    ("chino", "básico"): ("sábados de 10 de la mañana a 1 de la tarde", 75, 3),
}
# student number -> name, language, level, payments
ALUMNOS: dict[str, tuple[str, str, str, str]] = {
    "204513": ("Laura Méndez Gil", "inglés", "intermedio", "al día"),
    "318007": ("Carlos Peña", "alemán", "básico", "pendiente el recibo de noviembre, 70 euros"),
    "450067": ("Ana Belén Rivas", "francés", "intermedio", "al día"),
    "672100": ("Diego Fuentes", "chino", "básico", "al día"),
}
PRIMER_ALUMNO_NUEVO = 731204

SISTEMA = """\
Atiendes el teléfono de la secretaría de la Academia Babel, una escuela de idiomas. Habla de usted, con amabilidad
y brevedad: una o dos frases cortas. Responde siempre en español.
Solo las herramientas saben los grupos, los horarios, los precios, las plazas y las matrículas. Nunca inventes un
horario, un precio, unas plazas ni un número de alumno.
- el cliente pregunta por un curso de un idioma y un nivel (horario, precio, plazas) -> consultar_curso
- el cliente da su número de alumno de seis cifras y pregunta por su matrícula, su grupo o sus pagos -> consultar_alumno
- el cliente quiere matricularse o apuntarse y ha dicho el idioma, el nivel y su nombre y apellido -> matricular
- el cliente quiere darse de baja y da su número de alumno de seis cifras -> dar_de_baja
Los idiomas son inglés, francés, alemán, italiano y chino; los niveles, básico, intermedio y avanzado.
Si falta el idioma, el nivel, el nombre y apellido o el número de alumno, pregúntalo.
Después del resultado de una herramienta, dile al cliente lo que dice.
Lo que puedes decir sin herramienta:
- el horario de secretaría: "La secretaría abre de lunes a viernes, de 10 de la mañana a 2 de la tarde y de 5 a 9
  de la tarde."
- cualquier otra cosa (exámenes oficiales, clases particulares, el tiempo): "Lo siento, por teléfono solo puedo
  informarle de los cursos y ayudarle con matrículas y bajas."
"""


class Academia:
    """The school's groups and students for one call; the tools are its methods."""

    def __init__(self) -> None:
        self.plazas = {clave: datos[2] for clave, datos in GRUPOS.items()}
        self.alumnos = {k: list(v) for k, v in copy.deepcopy(ALUMNOS).items()}
        self.siguiente = PRIMER_ALUMNO_NUEVO

    def consultar_curso(self, idioma: Idioma, nivel: Nivel) -> str:
        """El horario, el precio al mes y las plazas libres del grupo de un idioma y un nivel"""
        if (idioma, nivel) not in GRUPOS:
            return f"Este curso no tenemos grupo de {idioma} {nivel}."
        horario, precio, _ = GRUPOS[(idioma, nivel)]
        plazas = self.plazas[(idioma, nivel)]
        quedan = ("el grupo está completo: no quedan plazas" if plazas == 0
                  else "queda 1 plaza libre" if plazas == 1 else f"quedan {plazas} plazas libres")
        return f"El grupo de {idioma} {nivel} tiene clase los {horario}, cuesta {precio} euros al mes y {quedan}."

    def consultar_alumno(self, numero_alumno: NumeroAlumno) -> dict[str, Any]:
        """El nombre, el grupo, el horario y los pagos de un alumno, por su número de alumno de seis cifras"""
        numero = "".join(ch for ch in str(numero_alumno) if ch.isdigit())
        if numero not in self.alumnos:
            return {"número de alumno": numero_alumno, "encontrado": "no",
                    "nota": "no hay ningún alumno con ese número; los números de alumno tienen seis cifras"}
        nombre, idioma, nivel, pagos = self.alumnos[numero]
        if pagos == "de baja":
            return {"número de alumno": numero, "nombre": nombre, "estado": "de baja"}
        return {"número de alumno": numero, "nombre": nombre, "grupo": f"{idioma} {nivel}",
                "horario": GRUPOS[(idioma, nivel)][0], "pagos": pagos}

    def matricular(self, idioma: Idioma, nivel: Nivel, nombre: Annotated[str, person_name()]) -> str:
        """Matricular a un alumno nuevo en el grupo de un idioma y un nivel, a su nombre y apellido"""
        if (idioma, nivel) not in GRUPOS:
            return f"No se puede: este curso no tenemos grupo de {idioma} {nivel}."
        if self.plazas[(idioma, nivel)] == 0:
            return f"No se puede: el grupo de {idioma} {nivel} está completo."
        nombre = " ".join(nombre.split())
        if len(nombre.split()) < 2:
            return "Para la matrícula necesito el nombre y el apellido."
        numero, self.siguiente = str(self.siguiente), self.siguiente + 1
        self.plazas[(idioma, nivel)] -= 1
        self.alumnos[numero] = [nombre, idioma, nivel, "al día"]
        horario, precio, _ = GRUPOS[(idioma, nivel)]
        return (f"Matrícula hecha: {nombre} en {idioma} {nivel}, los {horario}, {precio} euros al mes. "
                f"Su número de alumno es el {numero}.")

    def dar_de_baja(self, numero_alumno: NumeroAlumno) -> str:
        """Dar de baja a un alumno de su grupo, por su número de alumno de seis cifras"""
        numero = "".join(ch for ch in str(numero_alumno) if ch.isdigit())
        if numero not in self.alumnos:
            return f"No hay ningún alumno con el número {numero_alumno}; los números de alumno tienen seis cifras."
        nombre, idioma, nivel, pagos = self.alumnos[numero]
        if pagos == "de baja":
            return f"{nombre} ya estaba de baja."
        self.alumnos[numero][3] = "de baja"
        self.plazas[(idioma, nivel)] += 1
        return f"Baja tramitada: {nombre} deja el grupo de {idioma} {nivel} a final de mes."

    def tools(self) -> list[Tool]:
        return [Tool(self.consultar_curso), Tool(self.consultar_alumno),
                Tool(self.matricular, mutates=True, confirm="matricular a {nombre} en {idioma} {nivel}"),
                Tool(self.dar_de_baja, mutates=True, reversible=False,
                     confirm="dar de baja al alumno {numero_alumno}")]


def build(call_id: str, data_dir: Path) -> Agent:
    academia = Academia()  # a fresh copy of the groups and students for this call
    script = ["Con mucho gusto. ¿Qué idioma le interesa y de qué nivel?"]  # or --llm local
    return Agent(model=ScriptedModel(script), config=LoopConfig.profile("voice"), tools=academia.tools(),
                 system_prompt=SISTEMA, language="es",
                 scope="Lo siento, por teléfono solo puedo informarle de los cursos y ayudarle con matrículas y bajas.")


build.greeting = "Academia Babel, buenos días. ¿En qué le puedo ayudar?"
