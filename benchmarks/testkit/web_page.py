"""A local stand-in for a base URL that is no API: a web server answering every path with an
HTML page, as a reverse proxy, an admin console or a dev server does.

`models_json` makes its `/v1/models` answer an OpenAI-style JSON list (a gateway that lists
models but serves no chat), so the first chat call is what finds it out; `status` is what
every other path answers (200, or the 404/405/501 of a server without the route). It counts
the calls it answered, so a test can check that nothing was retried.
"""

from __future__ import annotations

from http import HTTPStatus

from aiohttp import web

from testkit.servers.served import ServedApp

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{status} {reason}</title>
</head>
<body>
  <h1>{reason}</h1>
  <p>The requested URL {path} could not be served by this web server.</p>
  <hr>
  <address>Stand-in web server at 127.0.0.1</address>
</body>
</html>
"""


class WebPageServer(ServedApp):
    url_suffix = "/v1"

    def __init__(self, status: int = 501, *, models_json: bool = False, port: int = 0) -> None:
        super().__init__(port)
        self.status = status
        self.models_json = models_json
        self.calls = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._page)
        return app

    async def _page(self, request: web.Request) -> web.Response:
        self.calls += 1
        if self.models_json and request.path == "/v1/models":
            return web.json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})
        status = 200 if request.path.endswith("/models") else self.status
        reason = HTTPStatus(status).phrase
        body = PAGE.format(status=status, reason=reason, path=request.path)
        return web.Response(status=status, text=body, content_type="text/html")
