"""Scores to structures: distances and heights to trees and heads (more decoders follow)."""
