"""Farmacia Sol's phone line, in Spanish: whether a medicine is in stock and its price; boxes of a medicine reserved
to pick up under the caller's full name (after a yes); a reservation checked, or cancelled (after a yes), by its
five-digit reservation number. The stock and the reservations live in memory; each `Farmacia()` starts from a fresh
copy of them. Promoted from evals/agents_es/farmacia (which stays as written), with `check_expectations` for the
call scripts' `reservas:` and `canceladas:`."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from loop import Tool
from loop.kinds import identifier, person_name

Medicamento = Literal["ibuprofeno", "paracetamol", "omeprazol", "amoxicilina", "loratadina", "cetirizina",
                      "loperamida", "almagato"]
# medicine -> what is sold (said aloud), its box, boxes in stock, price of a box in euro cents, needs a prescription
MEDICAMENTOS: dict[str, tuple[str, str, int, int, bool]] = {
    "ibuprofeno": ("ibuprofeno 600 miligramos", "caja de 40 comprimidos", 12, 320, False),
    "paracetamol": ("paracetamol 1 gramo", "caja de 40 comprimidos", 25, 250, False),
    "omeprazol": ("omeprazol 20 miligramos", "caja de 28 cápsulas", 8, 475, False),
    "amoxicilina": ("amoxicilina 500 miligramos", "caja de 30 cápsulas", 6, 360, True),
    "loratadina": ("loratadina 10 miligramos", "caja de 20 comprimidos", 5, 410, False),
    "cetirizina": ("cetirizina 10 miligramos", "caja de 20 comprimidos", 0, 395, False),
    "loperamida": ("loperamida 2 miligramos", "caja de 20 cápsulas", 7, 530, False),
    "almagato": ("almagato 1,5 gramos", "caja de 30 sobres", 10, 640, False),
}
LISTA = "lista para recoger"
# reservation number -> name, medicine, boxes, status
RESERVAS: dict[str, tuple[str, str, int, str]] = {
    "45127": ("Carmen López Díaz", "ibuprofeno", 2, LISTA),
    "30981": ("Javier Martín", "omeprazol", 1, LISTA),
    "72046": ("Ana Torres", "loratadina", 3, "pendiente: nos llega mañana por la mañana"),
    "58310": ("Diego Ramírez", "paracetamol", 2, "ya recogida"),
}
PRIMERA_RESERVA_NUEVA = 61204
CANCELADA = "cancelada"

NumeroReserva = Annotated[str, identifier(digits=5)]


def euros(centimos: int) -> str:
    """320 -> '3,20 euros' (decimal comma, as written in Spain and most of Latin America)."""
    return f"{centimos // 100},{centimos % 100:02d} euros"


def cajas_dichas(n: int) -> str:
    return "1 caja" if n == 1 else f"{n} cajas"


def solo_cifras(numero: str) -> str:
    """'reserva 45127', '45-127', '4 5 1 2 7' -> '45127'."""
    return "".join(ch for ch in str(numero) if ch.isdigit())


class Farmacia:
    """The pharmacy's stock and reservations for one call; the tools are its methods."""

    def __init__(self) -> None:
        self.stock = {nombre: datos[2] for nombre, datos in MEDICAMENTOS.items()}
        self.reservas: dict[str, list[Any]] = {k: list(v) for k, v in copy.deepcopy(RESERVAS).items()}
        self.siguiente = PRIMERA_RESERVA_NUEVA

    def consultar_medicamento(self, medicamento: Medicamento) -> str:
        """Si la farmacia tiene un medicamento, cuántas cajas quedan, el precio de la caja y si necesita receta"""
        que, caja, _, precio, receta = MEDICAMENTOS[medicamento]
        quedan = self.stock[medicamento]
        if quedan:
            frase = f"Sí, tenemos {que}, en {caja}: quedan {cajas_dichas(quedan)}, a {euros(precio)} la caja."
        else:
            frase = (f"Ahora mismo no nos quedan cajas de {medicamento}: las existencias están agotadas. "
                     f"La caja cuesta {euros(precio)}.")
        if receta:
            frase += " Necesita receta médica: solo se dispensa con receta en la farmacia y no se puede reservar."
        return frase

    def reservar_medicamento(self, medicamento: Medicamento, cajas: Annotated[int, Field(ge=1, le=10)],
                             nombre: Annotated[str, person_name()]) -> str:
        """Reservar cajas de un medicamento que hay en la farmacia, para recogerlas, a nombre y apellido del cliente"""
        que, _, _, precio, receta = MEDICAMENTOS[medicamento]
        if receta:
            return (f"No se puede reservar {medicamento}: necesita receta médica. Traiga la receta a la farmacia "
                    "y se la damos allí.")
        quedan = self.stock[medicamento]
        if quedan == 0:
            return f"Lo siento, no nos quedan cajas de {medicamento}: están agotadas y no se puede reservar."
        if cajas > quedan:
            return f"Solo nos quedan {cajas_dichas(quedan)} de {medicamento}; puedo reservar como mucho {quedan}."
        nombre = " ".join(nombre.split())
        if len(nombre.split()) < 2:
            return "Para la reserva necesito el nombre y el apellido."
        numero, self.siguiente = str(self.siguiente), self.siguiente + 1
        self.stock[medicamento] -= cajas
        self.reservas[numero] = [nombre, medicamento, cajas, LISTA]
        return (f"Reservado: {cajas_dichas(cajas)} de {que} a nombre de {nombre}, número de reserva {numero}. "
                f"Se guarda dos días y se paga al recoger: {euros(precio * cajas)}.")

    def consultar_reserva(self, numero_reserva: NumeroReserva) -> dict[str, Any]:
        """El nombre, el medicamento, las cajas y el estado de una reserva, por su número de reserva de cinco cifras"""
        numero = solo_cifras(numero_reserva)
        if numero not in self.reservas:
            return {"número de reserva": numero_reserva, "encontrada": "no",
                    "nota": "no hay ninguna reserva con ese número; los números de reserva tienen cinco cifras"}
        nombre, medicamento, cajas, estado = self.reservas[numero]
        return {"número de reserva": numero, "nombre": nombre, "medicamento": MEDICAMENTOS[medicamento][0],
                "cajas": cajas, "estado": estado}

    def cancelar_reserva(self, numero_reserva: NumeroReserva) -> str:
        """Cancelar una reserva por su número de reserva de cinco cifras"""
        numero = solo_cifras(numero_reserva)
        if numero not in self.reservas:
            return f"No hay ninguna reserva {numero_reserva}; los números de reserva tienen cinco cifras."
        nombre, medicamento, cajas, estado = self.reservas[numero]
        if estado == CANCELADA:
            return f"La reserva {numero} ya estaba cancelada."
        if estado == "ya recogida":
            return f"La reserva {numero} ya se recogió, así que no se puede cancelar."
        self.reservas[numero][3] = CANCELADA
        if estado == LISTA:
            self.stock[medicamento] += cajas
        return f"Cancelada: la reserva {numero} de {cajas_dichas(cajas)} de {medicamento} a nombre de {nombre}."

    def tools(self) -> list[Tool]:
        return [Tool(self.consultar_medicamento), Tool(self.consultar_reserva),
                Tool(self.reservar_medicamento, mutates=True,
                     confirm="reservar {cajas} cajas de {medicamento} a nombre de {nombre}"),
                Tool(self.cancelar_reserva, mutates=True, reversible=False,
                     confirm="cancelar la reserva {numero_reserva}")]

    def nuevas(self) -> list[str]:
        """The reservations made so far, oldest first, as "medicine boxes" (the name is left out: it is what speech
        to text is least sure of)."""
        return [f"{med} {cajas}" for numero, (_, med, cajas, _) in self.reservas.items()
                if numero not in RESERVAS]

    def canceladas(self) -> list[str]:
        return sorted(numero for numero, datos in self.reservas.items() if datos[3] == CANCELADA)

    def check_expectations(self, expect: dict[str, object]) -> list[str]:
        """A call script's `reservas: ["ibuprofeno 2", ...]` (reservations made in the call, in order) and
        `canceladas: [numero, ...]` (reservations cancelled), as unmet lines."""
        fails: list[str] = []
        if "reservas" in expect:
            want = [str(r) for r in expect.pop("reservas") or []]  # type: ignore[union-attr]
            if self.nuevas() != want:
                fails.append(f"reservas should be {want}, got {self.nuevas()}")
        if "canceladas" in expect:
            want = sorted(str(n) for n in expect.pop("canceladas") or [])  # type: ignore[union-attr]
            if self.canceladas() != want:
                fails.append(f"canceladas should be {want}, got {self.canceladas()}")
        if expect:
            fails.append(f"expect: {', '.join(sorted(expect))} unknown to the pharmacy")
        return fails


def open_farmacia(data_dir: str | Path) -> Farmacia:
    """The agent file's `toolset` (the stock and the reservations live in memory, a fresh copy each time)."""
    return Farmacia()
