"""The benchmarks' upstream data: finding a suite's folder, verifying it against ``suite.yaml``'s sums, downloading
pinned files, Git LFS and overlays. Imports only the contract (and the standard library); the run hands it the
folders it may write (``DownloadFolders``, from the run's cache layout).

One module a job: ``source`` (what a suite's data are), ``resolution`` (where they come from), ``verification``
(checking them, and their one digest), ``hashes`` (file digests and their cache), ``entries`` (``download: true``
files), ``downloads`` (fetching, checked), ``lfs`` (Git LFS pointers), ``overlay`` (a folder plus downloaded
files), ``reads`` (which files a loader opens)."""

from .downloads import downloads_allowed
from .entries import download_entries
from .hashes import HashCache
from .reads import recording_reads
from .resolution import resolve
from .source import DataSource, DownloadFolders
from .verification import seal, verify

__all__ = ["DataSource", "DownloadFolders", "HashCache", "download_entries", "downloads_allowed", "recording_reads",
           "resolve", "seal", "verify"]
