"""Man pages and completion scripts generated from the tools' click definitions."""
