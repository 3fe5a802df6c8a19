"""An image's binary as an HTTP answer (the rendering itself is ``domain.rendering``)."""

from __future__ import annotations

import os
from typing import BinaryIO

import anyio
from starlette.responses import FileResponse, Response
from starlette.types import Receive, Scope, Send

from ..domain.rendering import Binary


def binary_response(binary: Binary) -> Response:
    """The answer streaming ``binary``: its open cached file, its bytes, or its stored file."""
    if binary.handle is not None:
        return _OpenFileResponse(binary.handle, binary.media_type)
    if binary.data is not None:
        return Response(binary.data, media_type=binary.media_type)
    assert binary.path is not None
    return FileResponse(binary.path, media_type=binary.media_type)  # stored files are never removed


class _OpenFileResponse(Response):
    """Streams a file opened before the answer began, so removing its name meanwhile (the render
    cache's eviction, in any worker) cannot break the answer."""

    chunk_size = 64 * 1024

    def __init__(self, handle: BinaryIO, media_type: str) -> None:
        self.handle = handle
        super().__init__(media_type=media_type, headers={"content-length": str(os.fstat(handle.fileno()).st_size)})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            while chunk := await anyio.to_thread.run_sync(self.handle.read, self.chunk_size):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self.handle.close()
