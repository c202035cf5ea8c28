"""shopkit: a tiny shop. Money, Cart and add are mentioned here only."""
from .money import Money
