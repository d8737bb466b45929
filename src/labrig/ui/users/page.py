"""The Users and roles page: who holds which role, and for admins a form to assign or remove one.

Threading contract: GUI thread only. The roster is read (newest wins) and a role saved on the
page's pool threads (:class:`~labrig.ui.shell.background.BackgroundCalls`). Role changes come with
no outbox event, so the roster is read again whenever the page is shown and after a save. The
access service is the authority: the form is offered only to admins (and, while no admin exists,
to anyone, for the first admin), but a refusal the service returns is shown in its own words.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from labrig.access import AccessControl, RoleChange, Roster
from labrig.domain.roles import NO_ROLE, Role
from labrig.errors import LabrigError
from labrig.ui.common.list_detail import rows_word
from labrig.ui.common.rows_model import rows_table, selected_key
from labrig.ui.common.widgets import message_label, named_button
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.latest import Latest
from labrig.ui.users.model import RosterModel

INTRO = (
    "A technician may record, import, calibrate and run sync; a reviewer may also revise and "
    "export results; an admin may do everything, and also activate releases, change settings and "
    "assign roles. A user is the login of the person signed in to this computer."
)
ROLE_CHOICES = (
    ("technician", Role.TECHNICIAN.value),
    ("reviewer", Role.REVIEWER.value),
    ("admin", Role.ADMIN.value),
    ("none (remove the role)", NO_ROLE),
)


def who_may_change(roster: Roster) -> tuple[str, bool]:
    """The sentence above the form, and whether the signed-in user is offered the form."""
    me = roster.current_user
    admins = [u.user for u in roster.users if u.role == Role.ADMIN.value]
    if not roster.enforced:
        return (
            f"Signed in as {me}. No admin is assigned yet, so roles are not enforced and anyone "
            "may make the first admin (normally yourself); after that only admins change roles.",
            True,
        )
    if me in admins:
        return (
            f"Signed in as {me} (admin): you may assign or remove roles. Each change needs a "
            "reason and is kept in the audit trail.",
            True,
        )
    mine = next((u.role for u in roster.users if u.user == me), None)
    held = f"the {mine} role" if mine else "no role"
    return (
        f"Signed in as {me} ({held}). Only an admin ({', '.join(admins)}) can change roles; "
        "ask one of them.",
        False,
    )


class UsersPage(QWidget):
    """The roster on top, the admin's form below it."""

    def __init__(self, access: AccessControl, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._access = access
        self._calls = BackgroundCalls(threads=2, parent=self)
        self._roster_reads = Latest(self._calls)
        self._saving = False
        self.roster: Roster | None = None
        self.model = RosterModel(self)
        self.table = rows_table(self.model, "roster")
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self.list_status = message_label("rosterStatus", "Reading the roster…")
        self.who = message_label("whoMayChange")
        self._build_form()
        self._lay_out()

    def _build_form(self) -> None:
        self.form = QGroupBox("Assign or remove a role")
        self.user = QLineEdit()
        self.user.setObjectName("roleUser")
        self.user.setPlaceholderText("the person's login on this computer")
        self.role = QComboBox()
        self.role.setObjectName("roleChoice")
        for text, value in ROLE_CHOICES:
            self.role.addItem(text, value)
        self.reason = QLineEdit()
        self.reason.setObjectName("roleReason")
        self.reason.setPlaceholderText("why (required; kept in the audit trail)")
        self.save_button = named_button("saveRole", "Save role", self._save)
        self.message = message_label("roleMessage")
        fields = QFormLayout(self.form)
        fields.addRow("User", self.user)
        fields.addRow("Role", self.role)
        fields.addRow("Reason", self.reason)
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_button)
        buttons.addStretch(1)
        fields.addRow(buttons)
        self.form.setEnabled(False)

    def _lay_out(self) -> None:
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Users and roles</h2>"))
        layout.addWidget(message_label("usersIntro", INTRO))
        layout.addWidget(self.table, 1)
        layout.addWidget(self.list_status)
        layout.addWidget(self.who)
        layout.addWidget(self.form)
        layout.addWidget(self.message)

    # -- reading -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._calls.busy

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()  # roles change on other workstations and on the command line

    def refresh(self) -> None:
        self._roster_reads.request(self._access.roster, self._on_roster_read, self._on_read_failed)

    def _on_roster_read(self, roster: Roster) -> None:
        self.roster = roster
        selected = selected_key(self.table, self.model)
        self.model.set_rows(roster.users)
        if selected is not None:
            row = self.model.row_of(selected)
            if row is not None:
                self.table.selectRow(row)
        self.list_status.setText(
            f"{rows_word(len(roster.users), 'user')} listed, each with the assignment in force."
            if roster.users
            else "No one has a role yet."
        )
        sentence, allowed = who_may_change(roster)
        self.who.setText(sentence)
        self.form.setEnabled(allowed and not self._saving)

    def _on_read_failed(self, error: Exception) -> None:
        self.list_status.setText(f"The roster could not be read: {say_error(error)}")

    def shut_down(self, timeout_ms: int) -> None:
        self._calls.wait(timeout_ms)

    # -- saving --------------------------------------------------------------------------------

    @Slot()
    def _on_table_selection_changed(self) -> None:
        user = selected_key(self.table, self.model)
        if user is not None:
            self.user.setText(user)

    def _save(self) -> None:
        user, reason = self.user.text().strip(), self.reason.text().strip()
        if not user:
            self.message.setText("Not saved: type the person's login, or pick them in the roster.")
            return
        if not reason:  # the service refuses it too; said here with the field's name
            self.message.setText(
                "Not saved: a role change needs a reason, kept in the audit trail."
            )
            return
        role = str(self.role.currentData())
        self._saving = True
        self.form.setEnabled(False)
        self.message.setText(f"Saving the role of {user}…")
        work = partial(self._access.set_role, user, role, reason)
        self._calls.submit(work, self._on_saved, self._on_refused)

    def _on_saved(self, change: RoleChange) -> None:
        self._saving = False
        if not change.changed:
            self.message.setText(
                f"{change.user} already has {_role_words(change.role)}; nothing was recorded."
            )
        else:
            was = _role_words(change.previous)
            self.message.setText(
                f"{change.user} now has {_role_words(change.role)} (was {was}); kept in the audit "
                f"trail as entry {change.audit_seq}."
            )
            self.reason.clear()
        self.refresh()

    def _on_refused(self, error: Exception) -> None:
        self._saving = False
        code = f" ({error.code})" if isinstance(error, LabrigError) else ""
        self.message.setText(f"Not saved{code}: {say_error(error)}")
        self.refresh()  # the refusal may come from a roster that changed meanwhile


def _role_words(role: str | None) -> str:
    return f"the {role} role" if role else "no role"
