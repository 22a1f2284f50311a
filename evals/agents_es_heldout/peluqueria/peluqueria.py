"""Peluquería Marisol's phone line, in Spanish: the price and length of a service, the free times of a weekday, an
appointment booked for a service on a day at a time under the caller's name (after a yes), and an appointment
cancelled by its four-digit number (after a yes). Everything lives in memory; each `Peluqueria()` starts from a
fresh copy."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Annotated, Literal

from loop import Tool
from loop.kinds import identifier, person_name, when

Servicio = Literal["corte", "tinte", "mechas", "peinado", "barba", "alisado"]
Dia = Literal["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]

# service -> what it is called aloud, price in euros, how long it takes
SERVICIOS: dict[str, tuple[str, int, str]] = {
    "corte": ("el corte de pelo", 18, "media hora"),
    "tinte": ("el tinte", 35, "una hora y media"),
    "mechas": ("las mechas", 55, "unas dos horas"),
    "peinado": ("el peinado", 20, "45 minutos"),
    "barba": ("el arreglo de barba", 10, "20 minutos"),
    "alisado": ("el alisado de keratina", 90, "unas tres horas"),
}
CERRADO = ("lunes", "domingo")
# weekday -> free times (hour, minute), 24-hour clock
LIBRES: dict[str, list[tuple[int, int]]] = {
    "martes": [(10, 0), (12, 30), (17, 0)],
    "miércoles": [(9, 30), (11, 0), (16, 0), (18, 30)],
    "jueves": [],
    "viernes": [(10, 30), (13, 0), (19, 0)],
    "sábado": [(9, 30), (11, 30)],
}
# appointment number -> name, service, day, (hour, minute)
CITAS: dict[str, tuple[str, str, str, tuple[int, int]]] = {
    "1187": ("Carmen Ruiz", "mechas", "viernes", (16, 0)),
    "1342": ("Jorge Salinas", "barba", "sábado", (12, 0)),
    "1420": ("Rocío Benítez", "tinte", "martes", (16, 0)),
    "1503": ("Andrés Molina", "corte", "jueves", (11, 0)),
}
PRIMERA_CITA_NUEVA = 2051

NumeroCita = Annotated[str, identifier(digits=4)]

_HORAS = {"una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
          "nueve": 9, "diez": 10, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "quince": 15,
          "dieciséis": 16, "diecisiete": 17, "dieciocho": 18, "diecinueve": 19, "veinte": 20}


def hora_dicha(hm: tuple[int, int]) -> str:
    """(17, 0) -> 'las 5 de la tarde'; (9, 30) -> 'las 9 y media'; (13, 0) -> 'la 1 de la tarde'."""
    h, m = hm
    h12 = h - 12 if h > 12 else h
    texto = ("la 1" if h12 == 1 else f"las {h12}") + (" y media" if m == 30 else "")
    return texto + (" de la tarde" if h >= 13 else "")


def leer_hora(hora: str) -> tuple[int, int] | None:
    """'17:00', 'las cinco de la tarde', '5', 'las 12 y media', '9:30' -> (hour, minute), or None."""
    texto = hora.lower().strip()
    hallada = re.search(r"(\d{1,2})(?:[:.h](\d{2}))?", texto)
    if hallada:
        h, m = int(hallada.group(1)), int(hallada.group(2) or 0)
    else:
        palabra = next((p for p in re.findall(r"[a-záéíóúñ]+", texto) if p in _HORAS), None)
        if palabra is None:
            return None
        h, m = _HORAS[palabra], 0
    if "media" in texto:
        m = 30
    if h < 9 or ("tarde" in texto and h < 12):
        h += 12 if h < 12 else 0
    return h, m


def lista(horas: list[tuple[int, int]]) -> str:
    dichas = [hora_dicha(hm) for hm in horas]
    return dichas[0] if len(dichas) == 1 else ", ".join(dichas[:-1]) + " y " + dichas[-1]


class Peluqueria:
    """The salon's free times and appointments for one call; the tools are its methods."""

    def __init__(self) -> None:
        self.libres = copy.deepcopy(LIBRES)
        self.citas = {k: list(v) for k, v in copy.deepcopy(CITAS).items()}
        self.siguiente = PRIMERA_CITA_NUEVA

    def precio_servicio(self, servicio: Servicio) -> str:
        """Cuánto cuesta y cuánto dura un servicio de la peluquería"""
        nombre, precio, dura = SERVICIOS[servicio]
        plural = nombre.startswith("las ")
        return (f"{nombre.capitalize()} {'cuestan' if plural else 'cuesta'} {precio} euros y "
                f"{'duran' if plural else 'dura'} {dura}.")

    def horas_libres(self, dia: Dia) -> str:
        """Qué horas quedan libres para una cita un día de la semana"""
        if dia in CERRADO:
            return f"El {dia} la peluquería está cerrada; abrimos de martes a sábado."
        libres = self.libres[dia]
        if not libres:
            return f"El {dia} lo tenemos completo: no nos queda ninguna hora libre."
        return f"El {dia} nos quedan libres {lista(libres)}."

    def reservar_cita(self, servicio: Servicio, dia: Dia, hora: Annotated[str, when(time=True)],
                      nombre: Annotated[str, person_name()]) -> str:
        """Reservar una cita para un servicio un día de la semana a una hora, a nombre del cliente"""
        if dia in CERRADO:
            return f"El {dia} la peluquería está cerrada; abrimos de martes a sábado."
        hm = leer_hora(hora)
        libres = self.libres[dia]
        if hm is None or hm not in libres:
            quedan = f"quedan libres {lista(libres)}" if libres else "no queda ninguna hora libre"
            return f"El {dia} a esa hora no tenemos hueco; ese día {quedan}."
        nombre = " ".join(nombre.split())
        numero, self.siguiente = str(self.siguiente), self.siguiente + 1
        libres.remove(hm)
        self.citas[numero] = [nombre, servicio, dia, hm]
        return (f"Cita reservada: {SERVICIOS[servicio][0]} el {dia} a {hora_dicha(hm)}, a nombre de {nombre}. "
                f"Su número de cita es el {numero}.")

    def anular_cita(self, numero_cita: NumeroCita) -> str:
        """Anular una cita por su número de cita de cuatro cifras"""
        numero = "".join(ch for ch in str(numero_cita) if ch.isdigit())
        if numero not in self.citas:
            return f"No encuentro ninguna cita con el número {numero_cita}; los números de cita tienen cuatro cifras."
        nombre, servicio, dia, hm = self.citas.pop(numero)
        if dia in self.libres:
            self.libres[dia].append(hm)
            self.libres[dia].sort()
        return f"Anulada: la cita {numero} de {nombre}, {SERVICIOS[servicio][0]} el {dia} a {hora_dicha(hm)}."

    def tools(self) -> list[Tool]:
        return [Tool(self.precio_servicio), Tool(self.horas_libres),
                Tool(self.reservar_cita, mutates=True,
                     confirm="reservar {servicio} el {dia} a las {hora} a nombre de {nombre}"),
                Tool(self.anular_cita, mutates=True, reversible=False, confirm="anular la cita {numero_cita}")]


def open_peluqueria(data_dir: str | Path) -> Peluqueria:
    """The agent file's `toolset` (everything in memory, a fresh copy each time)."""
    return Peluqueria()
