"""Export: published results as a self-verifying bundle (CSV, JSON, PNG plots, provenance, optional
media, ``manifest.json`` and ``SHA256SUMS``), and checking a bundle read back. Qt-free."""

from labrig.export.service import ExportReport, ExportService
from labrig.export.verify import VerifyReport, verify_bundle

__all__ = ["ExportReport", "ExportService", "VerifyReport", "verify_bundle"]
