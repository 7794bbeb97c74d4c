import sys
from pathlib import Path

# The generator is a plain source package at the repository root (not installed).
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
