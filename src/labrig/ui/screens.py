"""The screens of the main window, declared as data: one
:class:`~labrig.ui.shell.pages.PageSpec` each.

Each factory receives the window's :class:`~labrig.ui.shell.pages.PageContext` and hands its
page only the services it uses. A screen's modules are imported by its factory, when the window
first shows it: the window opens on one screen without loading the others (the calibration
screen's plots, the capture screen's previews). Adding a screen: a folder under ``labrig/ui/`` with
its page, a factory and one entry here.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from labrig.ui.shell.pages import PageContext, PageSpec


def _capture(context: PageContext) -> QWidget:
    from labrig.ui.capture.page import CapturePage

    services = context.services
    return CapturePage(
        services.capture, services.queue, context.monitor, context.devices, services.calibration
    )


def _calibration(context: PageContext) -> QWidget:
    from labrig.ui.calibration.screen import CalibrationScreen

    return CalibrationScreen(context.services.calibration, context.bridge)


def _results(context: PageContext) -> QWidget:
    from labrig.ui.results.page import ResultsPage

    services = context.services
    return ResultsPage(services.governance.reviewed, lambda: services.export, context.bridge)


def _review(context: PageContext) -> QWidget:
    from labrig.ui.review.page import ReviewPage

    return ReviewPage(context.services.governance.reviewed, context.bridge)


def _queue(context: PageContext) -> QWidget:
    from labrig.ui.queue.page import QueuePage

    return QueuePage(context.services.queue, context.monitor)


def _devices(context: PageContext) -> QWidget:
    from labrig.ui.devices.page import DevicesPage

    return DevicesPage(context.devices, context.services.capture)


def _storage(context: PageContext) -> QWidget:
    from labrig.ui.storage.page import StoragePage

    return StoragePage(context.services.storage, context.bridge)


def _releases(context: PageContext) -> QWidget:
    from labrig.ui.releases.page import ReleasesPage

    services = context.services
    return ReleasesPage(services.releases, services.governance.access, context.bridge)


def _audit(context: PageContext) -> QWidget:
    from labrig.ui.audit.page import AuditPage

    return AuditPage(context.services.governance.audit, context.bridge)


def _users(context: PageContext) -> QWidget:
    from labrig.ui.users.page import UsersPage

    return UsersPage(context.services.governance.access)


def _settings(context: PageContext) -> QWidget:
    from labrig.ui.settings.page import SettingsPage

    return SettingsPage(context.services.store, context.services.sync)


PAGES: tuple[PageSpec, ...] = (
    PageSpec("capture", "Capture", _capture),
    PageSpec("calibration", "Calibration", _calibration),
    PageSpec("results", "Results", _results),
    PageSpec("review", "Review", _review),
    PageSpec("queue", "Queue", _queue),
    PageSpec("devices", "Devices", _devices),
    PageSpec("storage", "Storage", _storage),
    PageSpec("releases", "Releases", _releases),
    PageSpec("audit", "Audit trail", _audit),
    PageSpec("users", "Users and roles", _users),
    PageSpec("settings", "Settings", _settings),
)
