"""Taller Bicis Norte: la línea de teléfono de un taller de bicicletas. Cómo va una reparación por su número de
seis cifras; el precio y la duración de un servicio estándar; reservar un servicio de lunes a sábado a nombre del
cliente (tras su sí) y cancelar una reserva por su número de cinco cifras (tras su sí). Los datos viven en memoria:
cada toolset (cada llamada de prueba) empieza con una copia nueva.

    voiceloop serve --agent evals/agents_es/bicis/agent.yaml --llm local
"""

from __future__ import annotations

import copy
import unicodedata
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from loop import Tool
from loop.kinds import identifier, person_name

Servicio = Literal["pinchazo", "ajuste de frenos", "puesta a punto", "cambio de cadena", "centrado de rueda",
                   "ajuste de cambios"]
Dia = Literal["lunes", "martes", "miércoles", "jueves", "viernes", "sábado"]   # los domingos está cerrado
NumeroReparacion = Annotated[str, identifier(digits=6)]
NumeroReserva = Annotated[str, identifier(digits=5)]

# servicio -> precio en euros, lo que tarda, lo que incluye
PRECIOS: dict[str, tuple[int, str, str]] = {
    "pinchazo": (12, "unos 30 minutos", "cámara nueva incluida"),
    "ajuste de frenos": (15, "unos 30 minutos", "ajuste de los dos frenos"),
    "puesta a punto": (45, "un día, se recoge al día siguiente", "limpieza, engrase, frenos, cambios y ruedas"),
    "cambio de cadena": (25, "unos 20 minutos", "cadena estándar incluida"),
    "centrado de rueda": (18, "unos 45 minutos", "una rueda"),
    "ajuste de cambios": (14, "unos 30 minutos", "cambio delantero y trasero"),
}
# número de reparación -> bici, trabajo hecho, estado, precio hasta ahora en euros, cuándo estará lista / recogida
REPARACIONES: dict[str, tuple[str, str, str, int, str]] = {
    "451273": ("Orbea de montaña roja", "cambio de pastillas y purgado de los frenos hidráulicos",
               "esperando piezas: las pastillas llegan el jueves", 38, "el viernes por la tarde"),
    "308846": ("Specialized de carretera negra", "puesta a punto completa", "en el taller, en curso", 45,
               "mañana a partir de las 6 de la tarde"),
    "672019": ("BH de paseo azul", "cámara trasera nueva y ajuste de frenos", "lista para recoger", 27, "ya"),
    "120534": ("Giant eléctrica gris", "centrado de la rueda delantera y cadena nueva", "recogida", 43,
               "el lunes pasado"),
    "915360": ("Brompton plegable verde", "cambio de cadena", "en el taller, en curso", 25,
               "hoy a las 7 de la tarde"),
}
# número de reserva -> nombre, servicio, día, bicis, estado
RESERVAS: dict[str, tuple[str, str, str, int, str]] = {
    "40218": ("Lucía Fernández", "puesta a punto", "martes", 1, "reservada"),
    "40377": ("Carlos Ramírez", "pinchazo", "jueves", 1, "reservada"),
    "40561": ("Mariana Gómez", "ajuste de frenos", "sábado", 2, "reservada"),
}
PRIMERA_RESERVA_NUEVA = 52301
ENTREGA = {"sábado": "de 10 a 14"}
ENTREGA_ENTRE_SEMANA = "de 9:30 a 14 o de 17 a 20:30"


def _sin_tildes(texto: str) -> str:
    """'Miércoles ' -> 'miercoles'."""
    plano = unicodedata.normalize("NFD", str(texto).strip().lower())
    return "".join(ch for ch in plano if unicodedata.category(ch) != "Mn")


def _cifras(valor: str) -> str:
    """'reparación 451-273', '4 5 1 2 7 3' -> '451273'."""
    return "".join(ch for ch in str(valor) if ch.isdigit())


_SERVICIOS = {_sin_tildes(s): s for s in PRECIOS}
_DIAS = {_sin_tildes(d): d for d in ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado")}


class Taller:
    """Las reparaciones, los precios y las reservas del taller; las herramientas son sus métodos."""

    def __init__(self) -> None:
        self.reparaciones = copy.deepcopy(REPARACIONES)
        self.reservas: dict[str, list[Any]] = {k: list(v) for k, v in RESERVAS.items()}
        self.siguiente = PRIMERA_RESERVA_NUEVA

    def estado_reparacion(self, numero_reparacion: NumeroReparacion) -> dict[str, Any]:
        """Cómo va una reparación: la bici, el trabajo hecho, el estado, el precio hasta ahora y cuándo estará
        lista, por el número de reparación de seis cifras"""
        numero = _cifras(numero_reparacion)
        if numero not in self.reparaciones:
            return {"número de reparación": numero_reparacion, "encontrada": False,
                    "nota": "no hay ninguna reparación con ese número; el número de reparación tiene seis cifras"}
        bici, trabajo, estado, precio, cuando = self.reparaciones[numero]
        respuesta: dict[str, Any] = {"número de reparación": numero, "bici": bici, "trabajo hecho": trabajo,
                                     "estado": estado, "precio hasta ahora": f"{precio} euros"}
        if estado == "recogida":
            respuesta["recogida"] = cuando
        elif estado != "lista para recoger":
            respuesta["estará lista"] = cuando
        return respuesta

    def precio_servicio(self, servicio: Servicio) -> dict[str, Any]:
        """El precio en euros y lo que tarda un servicio estándar del taller"""
        clave = _SERVICIOS.get(_sin_tildes(servicio))
        if clave is None:
            return {"servicio": servicio, "encontrado": False,
                    "nota": "solo damos precio de pinchazo, ajuste de frenos, puesta a punto, cambio de cadena, "
                            "centrado de rueda y ajuste de cambios"}
        precio, tarda, incluye = PRECIOS[clave]
        return {"servicio": clave, "precio": f"{precio} euros", "tarda": tarda, "incluye": incluye}

    def reservar_servicio(self, servicio: Servicio, dia: Dia, nombre: Annotated[str, person_name()],
                          bicicletas: Annotated[int, Field(ge=1, le=4)] = 1) -> str:
        """Reservar un servicio estándar para un día de lunes a sábado, a nombre y apellido del cliente, para 1 a 4
        bicis"""
        clave, dia_ok = _SERVICIOS.get(_sin_tildes(servicio)), _DIAS.get(_sin_tildes(dia))
        if clave is None:
            return ("Solo reservamos pinchazo, ajuste de frenos, puesta a punto, cambio de cadena, centrado de rueda "
                    "o ajuste de cambios.")
        if dia_ok is None:
            return "Los domingos el taller está cerrado; las reservas son de lunes a sábado."
        nombre = " ".join(str(nombre).split())
        if len(nombre.split()) < 2:
            return "Necesito el nombre y el apellido para la reserva."
        if not 1 <= int(bicicletas) <= 4:
            return "Por teléfono reservamos de 1 a 4 bicis."
        numero, self.siguiente = str(self.siguiente), self.siguiente + 1
        self.reservas[numero] = [nombre, clave, dia_ok, int(bicicletas), "reservada"]
        bicis, traer = ("1 bici", "traerla") if bicicletas == 1 else (f"{bicicletas} bicis", "traerlas")
        return (f"Reservado: número de reserva {numero}. {clave.capitalize()} para {bicis} el {dia_ok}, a nombre de "
                f"{nombre}. Puede {traer} {ENTREGA.get(dia_ok, ENTREGA_ENTRE_SEMANA)}.")

    def cancelar_reserva(self, numero_reserva: NumeroReserva) -> str:
        """Cancelar una reserva por su número de reserva de cinco cifras"""
        numero = _cifras(numero_reserva)
        if numero not in self.reservas:
            return f"No hay ninguna reserva {numero_reserva}; el número de reserva tiene cinco cifras."
        nombre, servicio, dia, _, estado = self.reservas[numero]
        if estado == "cancelada":
            return f"La reserva {numero} ya estaba cancelada."
        self.reservas[numero][4] = "cancelada"
        return f"Cancelada: la reserva {numero} de {nombre}, {servicio} el {dia}. No tiene ningún coste."

    def tools(self) -> list[Tool]:
        return [Tool(self.estado_reparacion), Tool(self.precio_servicio),
                Tool(self.reservar_servicio, mutates=True,
                     confirm="reservar {servicio} el {dia} a nombre de {nombre}"),
                Tool(self.cancelar_reserva, mutates=True, reversible=False,
                     confirm="cancelar la reserva {numero_reserva}")]


def abrir_taller(data_dir: str | Path) -> Taller:
    """El `toolset` del archivo del agente: los datos viven en memoria, una copia nueva cada vez."""
    return Taller()
