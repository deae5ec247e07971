"""Importers for real corpora: each maps one corpus honestly onto attunebench/v1, recording in
`source` who gave each kind of label and counting what it could not carry over. `importers`
is the registry (a name gives the class, whose fields are its options).
"""

from __future__ import annotations

from attunebench.data.importers._base import (
    Importer,
    ImportFormatError,
    ImportOptionError,
    Location,
)
from attunebench.data.importers.convai1 import ConvAI1Importer
from attunebench.data.importers.csv_generic import CsvImporter
from attunebench.data.importers.dailydialog import DailyDialogImporter
from attunebench.data.importers.empathy_mental_health import EmpathyMentalHealthImporter
from attunebench.data.importers.esconv import ESConvImporter
from attunebench.data.importers.goemotions import GoEmotionsImporter
from attunebench.data.importers.meld import MELDImporter
from attunebench.data.importers.topical_chat import TopicalChatImporter
from attunebench.data.importers.uss import USSImporter
from attunebench.data.importers.write import ImportResult, import_to_file
from attunebench.registry import Registry

# Each corpus's own importer, in the order `data import` lists them (then csv, for any other).
CORPORA: dict[str, type[Importer]] = {
    "esconv": ESConvImporter,
    "dailydialog": DailyDialogImporter,
    "meld": MELDImporter,
    "uss": USSImporter,
    "goemotions": GoEmotionsImporter,
    "empathy_mental_health": EmpathyMentalHealthImporter,
    "convai1": ConvAI1Importer,
    "topical_chat": TopicalChatImporter,
}
importers: Registry[type[Importer]] = Registry("importer")
for _name, _importer in {**CORPORA, "csv": CsvImporter}.items():
    importers.register(_name)(_importer)

__all__ = [
    "CORPORA",
    "ConvAI1Importer",
    "CsvImporter",
    "DailyDialogImporter",
    "ESConvImporter",
    "EmpathyMentalHealthImporter",
    "GoEmotionsImporter",
    "ImportFormatError",
    "ImportOptionError",
    "ImportResult",
    "Importer",
    "Location",
    "MELDImporter",
    "TopicalChatImporter",
    "USSImporter",
    "import_to_file",
    "importers",
]
