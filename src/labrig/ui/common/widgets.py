"""Small widgets every screen builds the same way: labels a technician reads, named buttons, and a
detail panel's title over its body.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget


def message_label(
    name: str, text: str = "", *, wrap: bool = True, selectable: bool = True
) -> QLabel:
    """A label named ``name`` for sentences a technician reads, word-wrapped, and selectable so that
    it can be copied into a support request."""
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(wrap)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def fixed_lines(label: QLabel, lines: int) -> QLabel:
    """``label`` word-wrapped and as tall as ``lines`` lines whatever it says, so what is laid out
    below it never moves when its text changes length; the whole text is in its tooltip too."""
    label.setWordWrap(True)
    margins = label.contentsMargins()
    height = lines * label.fontMetrics().lineSpacing() + margins.top() + margins.bottom() + 6
    label.setFixedHeight(height)
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    return label


def named_button(
    name: str, text: str, slot: Callable[[], None] | None = None, tip: str = ""
) -> QPushButton:
    """A push button named ``name`` (tests and style sheets find it by that), calling
    ``slot`` when clicked."""
    button = QPushButton(text)
    button.setObjectName(name)
    if tip:
        button.setToolTip(tip)
    if slot is not None:
        button.clicked.connect(slot)
    return button


def title_over_body(owner: QWidget, title: QLabel, body: QWidget) -> QWidget:
    """Lay ``owner`` out as ``title`` above ``body``. Returns the placeholder that takes the
    body's room while the body is hidden (nothing to show: the title says why), so the title
    stays at the top."""
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(title)
    layout.addWidget(body, 1)
    placeholder = QWidget()
    layout.addWidget(placeholder, 1)
    return placeholder
