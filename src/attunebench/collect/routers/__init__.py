"""One router per resource: the participant's path, the admin pages, the export, the site."""

from attunebench.collect.routers import admin, export, participant, site

__all__ = ["admin", "export", "participant", "site"]
