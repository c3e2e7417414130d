"""VISA Console: voice-controlled auxiliary console for robotic surgery."""

__version__ = "0.1.0"
