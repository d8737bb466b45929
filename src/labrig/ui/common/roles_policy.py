"""The line the Review and Releases screens show while no admin is assigned: the store's bootstrap
policy (:mod:`labrig.domain.roles`: roles are enforced once an admin exists) in words.

Threading contract: GUI thread only; the page reads the roster off the GUI thread and says whether
roles are enforced.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from labrig.ui.common.palette import AMBER

NO_ADMIN_POLICY = (
    "No admin is assigned on this store, so roles are not enforced: anyone signed in to this "
    "computer may revise results and activate releases. Assign an admin in Users and roles."
)


class RolesPolicyBanner(QLabel):
    """An amber sentence, shown only while roles are not enforced (hidden until told)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(NO_ADMIN_POLICY, parent)
        self.setObjectName("rolesPolicy")
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setStyleSheet(
            f"QLabel {{ background: {AMBER}; color: black; border-radius: 4px; padding: 4px 8px; }}"
        )
        self.hide()

    def show_policy(self, enforced: bool) -> None:
        """Shown while ``enforced`` is False (no admin); hidden once an admin exists."""
        self.setHidden(enforced)
