"""pysemver - Semantic Versioning 2.0.0 versions and npm-style ranges."""
from .spec import Spec, max_satisfying, satisfies
from .version import Version, parse

__all__ = ["Version", "parse", "Spec", "satisfies", "max_satisfying"]
