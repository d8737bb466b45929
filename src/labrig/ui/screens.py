"""The screens of the main window, declared as data: one
:class:`~labrig.ui.shell.pages.PageSpec` each.

Each factory receives the window's :class:`~labrig.ui.shell.pages.PageContext` and hands its
page only the services it uses. Adding a screen: a folder under ``labrig/ui/`` with its page,
and one entry here.
"""

from __future__ import annotations

from labrig.ui.audit.page import AuditPage
from labrig.ui.calibration.screen import CalibrationScreen
from labrig.ui.capture.page import CapturePage
from labrig.ui.devices.page import DevicesPage
from labrig.ui.queue.page import QueuePage
from labrig.ui.releases.page import ReleasesPage
from labrig.ui.results.page import ResultsPage
from labrig.ui.review.page import ReviewPage
from labrig.ui.settings.page import SettingsPage
from labrig.ui.shell.pages import PageSpec
from labrig.ui.storage.page import StoragePage
from labrig.ui.users.page import UsersPage

PAGES: tuple[PageSpec, ...] = (
    PageSpec(
        "capture",
        "Capture",
        lambda context: CapturePage(
            context.services.capture,
            context.services.queue,
            context.monitor,
            context.devices,
            context.services.calibration,
        ),
    ),
    PageSpec(
        "calibration",
        "Calibration",
        lambda context: CalibrationScreen(context.services.calibration, context.bridge),
    ),
    PageSpec(
        "results",
        "Results",
        lambda context: ResultsPage(
            context.services.governance.reviewed, context.services.export, context.bridge
        ),
    ),
    PageSpec(
        "review",
        "Review",
        lambda context: ReviewPage(context.services.governance.reviewed, context.bridge),
    ),
    PageSpec("queue", "Queue", lambda context: QueuePage(context.services.queue, context.monitor)),
    PageSpec(
        "devices",
        "Devices",
        lambda context: DevicesPage(context.devices, context.services.capture),
    ),
    PageSpec(
        "storage", "Storage", lambda context: StoragePage(context.services.storage, context.bridge)
    ),
    PageSpec(
        "releases",
        "Releases",
        lambda context: ReleasesPage(
            context.services.releases, context.services.governance.access, context.bridge
        ),
    ),
    PageSpec(
        "audit",
        "Audit trail",
        lambda context: AuditPage(context.services.governance.audit, context.bridge),
    ),
    PageSpec(
        "users", "Users and roles", lambda context: UsersPage(context.services.governance.access)
    ),
    PageSpec(
        "settings",
        "Settings",
        lambda context: SettingsPage(context.services.store, context.services.sync),
    ),
)
