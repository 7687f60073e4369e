"""The guest's side of isospawn: talk back to the caller.

    from isospawn import guest
    ch = guest.channel()       # None outside a guest
    if ch is not None:
        job = ch.recv(timeout=10)
        ch.send(b"result")

The helper gives a guest spawned with channel=True a SOCK_SEQPACKET socket
on descriptor 3 and ISOSPAWN_CHANNEL_FD=3 (with channel='stream', a
SOCK_STREAM one). This side needs no helper and no library call: it is a
plain socket, found by that variable and checked to be such a socket
before it is used.

In a guest, os.getpid() is 2: it runs in a PID namespace of its own,
under a reaper that is pid 1 there. That number means nothing to the
caller, which knows the guest by Guest.pid (the reaper's pid as the caller
sees it): a guest should not report os.getpid() to its supervisor.
"""
from __future__ import annotations

import os
import select
import socket
from typing import Any, Optional

from ._core import MESSAGE_MAX
from ._spec import deadline, ms_until

__all__ = ["Channel", "channel"]


class Channel:
    """The guest's end of its channel, as isospawn.guest.channel() returns
    it in a guest spawned with channel=True: messages that keep their
    boundaries (a SOCK_SEQPACKET socket), or with channel='stream' a byte
    stream (a SOCK_STREAM one: .stream is True). The caller's end is the
    Guest (send(), recv(), channel_fileno()). Use it from one thread at a
    time for each direction; close() must not race with a send() or
    recv(). A context manager: leaving the block closes it."""

    def __init__(self, sock: socket.socket) -> None:
        """Made by channel()."""
        self._sock: Optional[socket.socket] = sock
        self.stream = sock.type == socket.SOCK_STREAM
        self._peek = bytearray(1)

    def __enter__(self) -> Channel:
        self._open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True once closed."""
        return self._sock is None

    def send(self, data: bytes) -> None:
        """Send one message (1 to MESSAGE_MAX bytes) to the caller, or on a
        stream all of data."""
        message = memoryview(data).cast("B")
        if self.stream:
            self._open().sendall(message, socket.MSG_NOSIGNAL)
            return
        if not 0 < len(message) <= MESSAGE_MAX:
            raise ValueError("a message is 1 to %d bytes, not %d"
                             % (MESSAGE_MAX, len(message)))
        self._open().send(message, socket.MSG_NOSIGNAL)

    def recv(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """Receive one message, whatever its size, or on a stream the bytes
        that have arrived, waiting at most timeout seconds (None: for
        ever); None when nothing arrived in time; EOFError once the caller
        closed its end."""
        sock = self._open()
        until = deadline(timeout)
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        while True:
            try:
                if self.stream:
                    data = sock.recv(65536, socket.MSG_DONTWAIT)
                else:
                    # Its length first (MSG_TRUNC), then the message whole.
                    size = sock.recv_into(self._peek, 1, socket.MSG_PEEK |
                                          socket.MSG_TRUNC | socket.MSG_DONTWAIT)
                    data = sock.recv(max(size, 1), socket.MSG_DONTWAIT)
            except BlockingIOError:
                ms = ms_until(until)
                if ms == 0 or not poller.poll(ms):
                    return None
                continue
            except ConnectionResetError:
                data = b""
            if not data:
                raise EOFError("the caller closed its end of the channel")
            return data

    def fileno(self) -> int:
        """The channel's descriptor, for selectors."""
        return self._open().fileno()

    def close(self) -> None:
        """Close the channel: the caller's recv() then raises EOFError."""
        global _channel
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if _channel is self:
            _channel = None

    def _open(self) -> socket.socket:
        if self._sock is None:
            raise ValueError("the channel is closed")
        return self._sock


# The one Channel of this process, while it is open.
_channel: Optional[Channel] = None


def channel() -> Optional[Channel]:
    """The guest's end of the message channel its caller asked for
    (spawn(..., channel=True)): the socket ISOSPAWN_CHANNEL_FD names, once
    it is checked to be one. None outside a guest, or in a guest without a
    channel. The same object on every call until it is closed."""
    global _channel
    if _channel is None:
        value = os.environ.get("ISOSPAWN_CHANNEL_FD", "")
        if not (value.isascii() and value.isdigit()) or int(value) > 2**31 - 1:
            return None
        try:
            sock = socket.socket(fileno=int(value))
        except OSError:
            return None
        if sock.family != socket.AF_UNIX or \
                sock.type not in (socket.SOCK_SEQPACKET, socket.SOCK_STREAM):
            sock.detach()  # not ours to close
            return None
        _channel = Channel(sock)
    return _channel
