"""Test-wide settings: headless SDL/matplotlib, Ray without an auth token."""

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
