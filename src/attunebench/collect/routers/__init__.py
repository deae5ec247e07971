"""One router per resource: the participant's path, the admin pages, the export, the site."""
