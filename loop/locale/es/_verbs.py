"""Spanish: a word reduced to the root its forms share, so a verb as a caller says it meets the infinitive of a
tool's name and the words of its description ("anúleme la reserva", "cancélela", "quería anular" and
`cancelar_reserva`). Part of the pack `loop.locale.es`, which exports `word_root`. Labelled:
tests/data/verb_forms_es.tsv.

By construction, not by a list of forms: a pronoun written onto a verb (an enclitic) comes off where what is left
is a verb's shape, the accents are folded, and the endings of person, tense, gerund, participle, plural and the
-ción noun come off to one root.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from loop.locale._text import unaccented

# the pronouns a verb takes written onto it ("dígame", "resérvemela", "cancelarlos"), at most two of them
CLITICS = ("me", "te", "se", "nos", "os", "le", "les", "lo", "la", "los", "las")
# without a written accent a pronoun comes off an infinitive only ("cancelarla", "reservarme"): these after any
# infinitive, and "me", "nos" after an -ar one ("reservarme"; "confirme", "comparte", "cuadernos" keep theirs)
PLAIN_CLITICS = ("se", "le", "les", "lo", "la", "los", "las")
# the endings of a verb's forms and of the nouns made from it, longest first where one ends another
ENDINGS = ("aciones", "iciones", "amientos", "imientos", "acion", "icion", "amiento", "imiento",
           "ariamos", "eriamos", "iriamos", "aramos", "ieramos", "abamos", "iamos",
           "arian", "erian", "irian", "arias", "erias", "irias", "aria", "eria", "iria",
           "aban", "abas", "aba", "ian", "ias", "ia", "aran", "ieran", "ara", "iera",
           "ando", "iendo", "yendo", "ados", "adas", "idos", "idas", "ado", "ada", "ido", "ida",
           "amos", "emos", "imos", "ais", "eis", "ar", "er", "ir", "an", "en", "as", "es", "os", "a", "e", "o", "s")
# verbs said for the same action ("anular" for "cancelar", "apartar" for "reservar"): the first is what the rest
# are read as (a tool says one, its caller the other)
SAME_ACTION = (("cancelar", "anular", "quitar"), ("reservar", "apartar"))

_VOWELS = "aeiou"
_SILENT_H = re.compile(r"(?<!c)h")  # "h" is not said (but in "ch"): a transcript writes "orario" for "horario"
# the diphthong a stressed stem takes ("devuélv|anmelo", "ciérr|ela", "cuént|emelo"), as its infinitive has it
_DIPHTHONG = re.compile(r"(?<![qg])(ue|ie)(?=[^aeiou]*$)")  # not the "u" of "qu", "gu"
_UNSTRESSED = {"ue": "o", "ie": "e"}
_ACCENT = re.compile("[áéíóú]")
_NUCLEUS = re.compile("[aeiouü]+")  # a syllable's vowels (an accented one stands apart: "en-ví-e")


@functools.lru_cache(maxsize=8192)
def word_root(word: str) -> str:
    """`word` (as written: its accent tells an imperative with pronouns, "cancélela") as the root its forms share,
    accents folded: "anúleme", "anule", "anulación", "anular" -> "anul", read as "cancel" (`SAME_ACTION`);
    "resérvemela", "reservas", "reservarme" -> "reserv"; "cápsulas" -> "capsul" (no pronoun: no verb ends in -u)."""
    root = _root_of(word)
    return _same_action().get(root, root)


def _root_of(word: str) -> str:
    """`word_root` before `SAME_ACTION`: pronouns, accents and endings off, a verb's stem as its infinitive has
    it ("devuélvanmelo" -> "devolv"), and no silent h ("horario", "orario" -> "orari")."""
    written = unicodedata.normalize("NFC", word.lower())
    folded = unaccented(written)
    if not folded.isalpha():
        return folded
    bare = _without_clitics(written, folded)
    root = _root(bare)
    if bare != folded or _infinitive(bare):  # a verb for certain: its stem as the infinitive has it
        root = _DIPHTHONG.sub(lambda m: _UNSTRESSED[m[1]], root)
    return _SILENT_H.sub("", root)


def _infinitive(word: str) -> bool:
    return word.endswith(("ar", "er", "ir")) and len(word) >= 5 and word[-3] not in _VOWELS


def verb_keys(word: str, said: bool = True) -> frozenset[str]:
    """What a word names a tool's verb by (`loop.grounding.tool_choice.named_writes`): the word itself, and its root
    when it is a verb's form - said with a pronoun on it, an infinitive, a gerund, an -e imperative ("resérveme",
    "apartar", "que me aparten", "anule" name `reservar_medicamento` and `cancelar_reserva`; "mi reserva", a noun,
    does not). A tool name's verb (`said` false) is named by its root."""
    written = unicodedata.normalize("NFC", word.lower())
    folded = unaccented(written)
    if not said or _verb_shaped(written, folded):
        return frozenset({folded, word_root(written)})
    return frozenset({folded})


def _verb_shaped(written: str, folded: str) -> bool:
    """A verb's form by its letters: a pronoun written onto it, an infinitive, a gerund, an -e/-en imperative."""
    return folded.isalpha() and len(folded) >= 5 and (
        _without_clitics(written, folded) != folded
        or (folded.endswith(("ar", "er", "ir")) and folded[-3] not in _VOWELS)
        or folded.endswith(("ando", "iendo", "yendo", "e", "en")))


def _without_clitics(written: str, folded: str) -> str:
    """`folded` less one or two pronouns written onto it (two first: "resérve|me|la"), where what is left is a
    verb: with a written accent (the stress a pronoun moved), an imperative, a gerund or an infinitive
    ("cancéle|la", "cancelándo|la", "cancelár|me|la"); without one, an infinitive ("cancelar|la")."""
    for first in (*CLITICS, ""):
        for last in CLITICS:
            if folded.endswith(first + last) and len(folded) - len(first + last) >= 3:
                n = len(folded) - len(first + last)
                if _verb_before(written[:n], folded[:n], first + last, first):
                    return folded[:n]
    return folded


def _verb_before(written: str, rest: str, clitics: str, first: str) -> bool:
    """What is left once `clitics` are off (`rest`; `written`, with its accent) is a verb's shape (`first`: the
    first of two pronouns, or "")."""
    infinitive = _infinitive(rest)
    if accent := _ACCENT.search(written):  # stressed where the verb is: "anú-le", "cancelán-do", "cancelár"
        after = len(_NUCLEUS.findall(written[accent.end():]))
        verb = rest[-1] in "aei" or rest.endswith(("an", "en", "ando", "iendo", "yendo"))
        return (after == 1 and verb) or (after == 0 and infinitive)
    if first or not infinitive:
        return False  # two pronouns without an accent: no verb ("cancelármela" is written with one)
    return clitics in PLAIN_CLITICS or (clitics in ("me", "nos") and rest.endswith("ar"))


def _root(word: str) -> str:
    """`word` less its longest ending that leaves three letters, the spelling its root changed for the ending
    undone ("pague" -> "pag", "busque" -> "busc")."""
    for ending in ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            root = word[: -len(ending)]
            if ending[0] == "e" and root.endswith(("gu", "qu")):
                root = root[:-2] + ("g" if root.endswith("gu") else "c")
            return root
    return word


@functools.cache
def _same_action() -> dict[str, str]:
    """The root of each `SAME_ACTION` verb to its first verb's root."""
    return {_root_of(verb): _root_of(verbs[0]) for verbs in SAME_ACTION for verb in verbs[1:]}
