"""The one resolver of what runs use: references to a project's resources, checked for
ownership and location, turned into paths only by the launcher (docs/resources.md)."""
