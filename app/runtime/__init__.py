"""Cross-cutting runtime services (DESIGN §2): the heavy-stage CPU scheduler, the model
manifest and settings. Depends on app.core only."""
