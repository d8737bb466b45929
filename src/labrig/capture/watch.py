"""Watch folders: media files another program drops are ingested through the import commit path.

When is a file complete? ``created``/``modified`` events fire while it is still
being written, and a quiet period is not proof (a writer that pauses 1.5 s fooled
a 1 s debounce). On Linux, inotify reports close-after-write and moves into the
folder, which are. Elsewhere, and for files already there at start-up, a file
counts as complete when its size and modification time are stable for a while
and it decodes whole; otherwise it is checked again later.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import FileClosedEvent, FileMovedEvent, FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from labrig.capture.importer import (
    MEDIA_EXTENSIONS,
    AlreadyImportedError,
    MediaTruncatedError,
    import_media,
)
from labrig.errors import LabrigError
from labrig.fsutil import shown
from labrig.store import Store

log = logging.getLogger(__name__)
MOVED_IN_GRACE_S = 0.5  # an open() that creates a file reports its opening within this


@dataclass(frozen=True)
class Ingested:
    path: str
    capture_id: str | None  # None when refused or already imported
    code: str | None  # refusal code
    message: str


class _Handler(FileSystemEventHandler):
    def __init__(self, ingestor: WatchFolderIngestor) -> None:
        self.ingestor = ingestor

    def on_closed(self, event: FileSystemEvent) -> None:
        if isinstance(event, FileClosedEvent):
            self.ingestor.offer(Path(str(event.src_path)), complete=True)

    def on_moved(self, event: FileSystemEvent) -> None:
        if isinstance(event, FileMovedEvent):
            self.ingestor.offer(Path(str(event.dest_path)), complete=True)

    def on_created(self, event: FileSystemEvent) -> None:
        path = Path(str(event.src_path))
        if self.ingestor.close_events:
            self.ingestor.created(path)  # moved in from another folder, or about to be written
        else:
            self.ingestor.offer(path, complete=False)

    def on_opened(self, event: FileSystemEvent) -> None:
        if self.ingestor.close_events:
            self.ingestor.writing(Path(str(event.src_path)))

    def on_modified(self, event: FileSystemEvent) -> None:
        path = Path(str(event.src_path))
        if self.ingestor.close_events:
            self.ingestor.writing(path)
        elif not event.is_directory:
            self.ingestor.offer(path, complete=False)


class WatchFolderIngestor:
    """Threading: watchdog's thread offers paths; one ingest thread imports them;
    ``results`` grows."""

    def __init__(
        self,
        store: Store,
        folder: Path,
        *,
        stable_seconds: float = 2.0,
        polling: bool | None = None,
    ) -> None:
        self.store, self.folder, self.stable_seconds = store, folder, stable_seconds
        self.close_events = sys.platform.startswith("linux") and not polling
        self._observer = (
            PollingObserver(timeout=0.5) if polling or not self.close_events else Observer()
        )
        self._queue: queue.Queue[Path | None] = queue.Queue()
        self._pending: dict[
            Path, tuple[int, float, float]
        ] = {}  # path -> (size, mtime, stable since)
        self._done: dict[
            Path, tuple[int, int]
        ] = {}  # path -> (size, mtime_ns) when last ingested or refused
        self._fresh: dict[Path, float] = {}  # Linux: created, not (yet) seen opened for writing
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="labrig-watch", daemon=True)
        self.results: list[Ingested] = []

    def start(self) -> None:
        for path in sorted(self.folder.iterdir()):  # files already there raise no events
            self.offer(path, complete=False)
        self._observer.schedule(_Handler(self), str(self.folder), recursive=False)
        self._observer.start()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._observer.stop()
        self._queue.put(None)
        self._observer.join(5)
        self._thread.join(30)

    def created(self, path: Path) -> None:
        """Linux: a file appeared. Written here, it is opened at once; moved in, it never is."""
        with self._lock:
            self._fresh[path] = time.monotonic()

    def writing(self, path: Path) -> None:
        with self._lock:
            self._fresh.pop(path, None)  # its close-after-write will announce it

    def offer(self, path: Path, *, complete: bool) -> None:
        if path.suffix.lower() not in MEDIA_EXTENSIONS or path.name.startswith("."):
            return
        if complete:
            self._queue.put(path)
        else:
            with self._lock:
                self._pending.setdefault(path, (-1, -1.0, 0.0))

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                path = self._queue.get(timeout=0.25)
            except queue.Empty:
                self._check_pending()
                continue
            if path is not None and not self._unchanged_since_done(path):
                self._ingest(path, retry_if_incomplete=False)

    def _check_pending(self) -> None:
        now = time.monotonic()
        with self._lock:
            moved_in = [p for p, seen in self._fresh.items() if now - seen >= MOVED_IN_GRACE_S]
            for path in moved_in:
                del self._fresh[path]
        for path in moved_in:
            self.offer(path, complete=True)
        with self._lock:
            candidates = list(self._pending.items())
        for path, (size, mtime, since) in candidates:
            try:
                stat = path.stat()
            except FileNotFoundError:
                self._forget(path)
                continue
            if (stat.st_size, stat.st_mtime) != (size, mtime):
                with self._lock:
                    self._pending[path] = (stat.st_size, stat.st_mtime, now)
            elif now - since >= self.stable_seconds:
                self._ingest(path, retry_if_incomplete=True)

    def _unchanged_since_done(self, path: Path) -> bool:
        # readers (OpenCV among them) may open a file writable and close it unchanged: not a new
        # file
        try:
            stat = path.stat()
        except FileNotFoundError:
            return True
        return self._done.get(path) == (stat.st_size, stat.st_mtime_ns)

    def _forget(self, path: Path) -> None:
        with self._lock:
            self._pending.pop(path, None)
        try:
            stat = path.stat()
            self._done[path] = (stat.st_size, stat.st_mtime_ns)
        except FileNotFoundError:
            self._done.pop(path, None)

    def _ingest(self, path: Path, *, retry_if_incomplete: bool) -> None:
        try:
            result = import_media(self.store, path, origin="watch_folder")
            self.results.append(
                Ingested(shown(path), result.capture_id, None, f"{result.frame_count} frames")
            )
        except MediaTruncatedError:
            if retry_if_incomplete:
                with self._lock:  # still being written: look again once it is stable again
                    self._pending[path] = (-1, -1.0, 0.0)
                return
            self._refuse(path, MediaTruncatedError.code, "the file ended incomplete")
        except AlreadyImportedError as exc:
            self.results.append(Ingested(shown(path), None, exc.code, exc.message))
        except LabrigError as exc:
            self._refuse(path, exc.code, exc.message)
        self._forget(path)

    def _refuse(self, path: Path, code: str, message: str) -> None:
        log.warning("watch folder %s: %s refused: %s", self.folder, shown(path.name), message)
        self.results.append(Ingested(shown(path), None, code, message))
