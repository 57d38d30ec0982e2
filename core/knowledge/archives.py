"""Zip containers on import (K1): .docx packages and uploaded .zip folders, read within limits.

A zip's directory says how big each member unpacks; a hostile one says 1 KB and inflates to 1 GB, or
says 1 GB in a 1 MB file. Both are refused: the declared sizes are checked before anything is unpacked,
and every member is read in pieces with a byte cap (zipfile itself stops at the declared size and then
fails the CRC check, which we report as a damaged file). Encrypted members and compression methods other
than the standard ones (stored, deflate) are refused before reading.
"""
from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import PurePosixPath

from core.base.errors import UserError

MAX_FILE_BYTES = 100_000_000  # one imported file (on disk or inside a zip)
MAX_DOCX_UNPACKED = 100_000_000  # a .docx package, every part unpacked
MAX_DOCX_XML = 20_000_000  # its XML parts unpacked: the text python-docx parses into memory
MAX_ZIP_UNPACKED, MAX_ZIP_FILES = 200_000_000, 5000  # an uploaded .zip of a folder
_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
_CHUNK = 1 << 20


class ArchiveError(UserError):
    """A zip (or a member of one) that cannot be read safely; the message names it and says what to do."""


def open_zip(data: bytes, name: str, kind: str, advice: str) -> zipfile.ZipFile:
    """The zip in ``data``, or an ArchiveError naming ``name`` (a ``kind`` file) with ``advice`` (what to do)."""
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise ArchiveError(f"{name}: not a readable {kind} ({exc}); {advice}") from exc


def member_problem(info: zipfile.ZipInfo) -> str:
    """Why a member must not be unpacked ('' when it may): encrypted, or an unusual compression method."""
    if info.flag_bits & 0x1:
        return "it is encrypted (password-protected); unpack it and zip it again without a password"
    if info.compress_type not in _METHODS:
        return (f"it uses compression method {info.compress_type}, which is not read here; zip it again with the "
                "standard (deflate) compression")
    return ""


def unsafe_name(name: str) -> bool:
    """An absolute path, a drive letter or a '..' step: unpacked as is, it would land outside its folder."""
    relative = PurePosixPath(name.replace("\\", "/"))
    return relative.is_absolute() or ".." in relative.parts or (relative.parts and ":" in relative.parts[0])


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int, name: str, keep: bool = True) -> bytes:
    """A member's bytes, read in pieces and never more than ``cap`` of them (``keep=False``: only verified)."""
    problem = member_problem(info)
    if problem:
        raise ArchiveError(f"{name}: {problem}.")
    if info.file_size > cap:
        raise ArchiveError(f"{name}: unpacks to {info.file_size:,} bytes, over the limit of {cap:,}; split it or "
                           "make it smaller.")
    out, total = io.BytesIO(), 0
    try:
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK):
                total += len(chunk)
                if total > cap:
                    raise ArchiveError(f"{name}: unpacks to more than {cap:,} bytes; split it or make it smaller.")
                if keep:
                    out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError) as exc:
        raise ArchiveError(f"{name}: damaged inside (its sizes or checksum do not match its content: {exc}); "
                           "zip or save it again.") from exc
    return out.getvalue()


def check_docx(data: bytes, filename: str) -> None:
    """Refuse a .docx whose package is not a sound zip or would unpack past the limits, before python-docx opens
    it (python-docx reads every part into memory)."""
    archive = open_zip(data, filename, ".docx", "save it again as Word .docx (a password-protected document "
                                                "cannot be read; save an unprotected copy).")
    with archive:
        members = archive.infolist()
        declared = sum(m.file_size for m in members)
        xml = sum(m.file_size for m in members if m.filename.lower().endswith((".xml", ".rels")))
        if declared > MAX_DOCX_UNPACKED or xml > MAX_DOCX_XML:
            raise ArchiveError(
                f"{filename}: the document unpacks to {declared:,} bytes ({xml:,} of text markup), over the limits of "
                f"{MAX_DOCX_UNPACKED:,} and {MAX_DOCX_XML:,}; split it into smaller documents.")
        for member in members:  # each part may unpack to its declared size and not one byte more
            read_member(archive, member, member.file_size, f"{filename} (part {member.filename})", keep=False)
