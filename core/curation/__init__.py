"""Editor operations that span packages: the impact preview of an edit and relocation of sources with what
points at them. Imports every layer below it."""
