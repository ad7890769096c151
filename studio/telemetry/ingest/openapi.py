"""The ingest wire format's OpenAPI schema, generated from its pydantic models.

pydantic writes JSON Schema 2020-12; our OpenAPI document is 3.0, which has no `const`,
no `{"type": "null"}` and no `propertyNames`. This generator writes the 3.0 spellings
(`enum`, `nullable`), and the extension hands drf-spectacular the result, with the
sub-models as components named `Ingest...` so they can't collide with the API's own.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, model_json_schema
from pydantic_core import core_schema

from studio.telemetry.ingest.records import Strict

PREFIX = "Ingest"


class OpenApi30JsonSchema(GenerateJsonSchema):
    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        result = super().literal_schema(schema)
        if "const" in result:
            result["enum"] = [result.pop("const")]
        return result

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        if "$ref" in inner:
            return {"allOf": [inner], "nullable": True}
        return {**inner, "nullable": True}

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        result = super().dict_schema(schema)
        result.pop("propertyNames", None)  # key bounds are in docs/telemetry.md
        return result


class IngestModelExtension(OpenApiSerializerExtension):
    """The request and response models of the ingest endpoint (`records.Strict`)."""

    target_class = Strict
    match_subclasses = True
    priority = 1  # before drf-spectacular's generic pydantic extension

    def get_name(self, auto_schema: Any, direction: Any) -> str:
        name = str(self.target.__name__)
        return name if name.startswith(PREFIX) else f"{PREFIX}{name}"

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema = model_json_schema(
            self.target,
            ref_template=f"#/components/schemas/{PREFIX}{{model}}",
            schema_generator=OpenApi30JsonSchema,
            mode="validation",
        )
        for name, sub_schema in schema.pop("$defs", {}).items():
            auto_schema.registry.register_on_missing(
                ResolvedComponent(
                    name=f"{PREFIX}{name}",
                    type=ResolvedComponent.SCHEMA,
                    object=f"{PREFIX}{name}",
                    schema=sub_schema,
                )
            )
        return schema
