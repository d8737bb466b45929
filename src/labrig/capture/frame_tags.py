"""A frame's index drawn in its own pixels, so a test (or a technician) can read back from a
picture which frame it is: the virtual rig's cameras draw it on every frame, the virtual camera
when asked (``VirtualCamera(tag_frames=True)``)."""

from __future__ import annotations

from labrig.capture.sources import Image

TAG_BITS, TAG_BLOCK, TAG_ORIGIN = 24, 8, (8, 8)  # the frame-index pattern: bits, block px, x/y
TAG_ON, TAG_OFF = 84, 12  # grey levels of a 1 and a 0


def write_frame_tag(img: Image, n: int) -> None:
    """Draw ``n`` (mod 2^24) as 24 dark or grey 8×8 blocks, most significant first, in the
    top-left corner; blocks sit on the JPEG grid so they survive compression, and stay darker than
    anything a marker tracker takes for a marker."""
    x0, y0 = TAG_ORIGIN
    for bit in range(TAG_BITS):
        on = (n >> (TAG_BITS - 1 - bit)) & 1
        x = x0 + bit * TAG_BLOCK
        img[y0 : y0 + TAG_BLOCK, x : x + TAG_BLOCK] = TAG_ON if on else TAG_OFF


def read_frame_tag(img: Image) -> int:
    """The frame index :func:`write_frame_tag` drew in ``img`` (decoded from pixels)."""
    x0, y0 = TAG_ORIGIN
    n = 0
    for bit in range(TAG_BITS):
        x = x0 + bit * TAG_BLOCK
        block = img[y0 + 2 : y0 + TAG_BLOCK - 2, x + 2 : x + TAG_BLOCK - 2]
        n = (n << 1) | int(block.mean() > (TAG_ON + TAG_OFF) / 2)
    return n
