"""The language a search query is written in: Chinese, Japanese, Korean, Spanish, French or
German when it is, English otherwise.

Told from the query alone, by counting what speaks for each language against the English
function words of the query (``the``, ``of``, ``to``, ``on``...), a tie going to English: for
Chinese, Japanese and Korean the runs of their script (Han only, kana, Hangul); for Spanish,
French and German their common words and letters (``crear``, ``une``, ``ç``), where one language
must have more than the others. So ``crear un evento en el calendario`` is Spanish and
``创建 GitHub issue`` Chinese, while ``time in America/Los_Angeles`` stays English.

That best guess picks the language of ``tool_search``'s hints, where a wrong guess costs little.
``certain=True`` is for a decision that changes a ranking (a search backend whose model reads
English only leaves a query in another language to its lexical side): a Latin-script language
then needs two of its common words, so a name in an English query (``Los Angeles weather``,
``kill die process``, ``email Müller``) keeps it English.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["QUERY_LANGUAGES", "query_language"]

QUERY_LANGUAGES: Final = ("en", "zh", "ja", "ko", "es", "fr", "de")
"""The languages :func:`query_language` tells (ISO 639-1)."""

_KANA = re.compile("[\u3041-\u30fa\u30fc-\u30ff\u31f0-\u31ff]+")  # not the middle dot ・
_HANGUL = re.compile("[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[^\W\d_]+")

# Words of English queries that are no word of the other languages (so not "a", "an", "me",
# "on", "die"); "in" is German too, and counts for English: an English request names places.
_ENGLISH_WORDS = (
    "the of to in on for with and is are was be my your i you it this that from by please can "
    "what which how at or do does our we any some"
)
_ENGLISH = frozenset(_ENGLISH_WORDS.split())
_MARKERS: Final = {
    "es": (
        "el los las del una unos para por con que mi mis tu quiero puedes crear crea nuevo "
        "nueva buscar busca enviar envía obtener mostrar muestra listar eliminar borrar borra "
        "actualizar correo archivo carpeta mensaje usuario ñ ¿ ¡"
    ),
    "fr": (
        "le les des du une pour avec dans sur et est mon ma mes ton ta tes créer crée nouveau "
        "nouvelle chercher cherche rechercher envoyer envoie supprimer supprime afficher affiche "
        "lister fichier dossier courriel utilisateur veux ç è ê à ù œ"
    ),
    "de": (
        "der die das den dem ein eine einen und mit für von zu zum zur ich mein meine meinen "
        "bitte erstellen erstelle neue neuen löschen lösche suchen suche senden sende anzeigen "
        "zeige datei ordner nachricht benutzer ä ö ü ß"
    ),
}
_MARKER_WORDS = {language: frozenset(text.split()) for language, text in _MARKERS.items()}


def query_language(query: str, *, certain: bool = False) -> str:
    """The language (one of :data:`QUERY_LANGUAGES`) ``query`` is written in: another
    language only when more speaks for it than English function words do; with ``certain``,
    a Latin-script language also needs two of its common words (its letters do not count)."""
    lowered = query.lower()
    words = _WORD.findall(lowered)
    english = sum(1 for word in words if word in _ENGLISH)
    if not query.isascii():
        for language, script in (("ja", _KANA), ("ko", _HANGUL), ("zh", _HAN)):
            runs = len(script.findall(query))
            if runs:  # kana before Han: Japanese is written with both
                return language if runs > english else "en"
    present = set(words)
    if not certain:
        present |= {letter for letter in lowered if not letter.isascii()}
    scores = {language: len(markers & present) for language, markers in _MARKER_WORDS.items()}
    best = max(scores.values())
    winners = [language for language, score in scores.items() if score == best]
    enough = best > english and (best >= 2 or not certain)
    return winners[0] if enough and len(winners) == 1 else "en"
