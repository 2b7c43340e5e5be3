"""Writes src/company_data/models.py from the server's OpenAPI document (docs/openapi.json).

Each schema of `components.schemas` becomes a `TypedDict` (an object: its required members as they are, the
others `NotRequired`), a `Literal` alias (a string enum) or an alias of what it is. The package's tests run this
again and compare, so the models never drift from the document: after the document changes, run

    python3 clients/python/scripts/generate_models.py
"""

from __future__ import annotations

import json
import keyword
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCUMENT = HERE.parents[2] / "docs" / "openapi.json"
MODELS = HERE.parent / "src" / "company_data" / "models.py"

SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def annotation(schema: dict) -> str:
    """The Python type of a JSON Schema."""
    if "$ref" in schema:
        return repr(schema["$ref"].rsplit("/", 1)[-1])[1:-1]
    if "enum" in schema:
        return "Literal[" + ", ".join(json.dumps(v) for v in schema["enum"]) + "]"
    if "const" in schema:
        return f"Literal[{json.dumps(schema['const'])}]"
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            return union([annotation(branch) for branch in schema[combinator]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return union([annotation({**schema, "type": k}) for k in kind])
    if kind == "array":
        return f"list[{annotation(schema.get('items', {}))}]"
    if kind == "object":
        extra = schema.get("additionalProperties")
        value = annotation(extra) if isinstance(extra, dict) else "Any"
        return f"dict[str, {value}]"
    return SCALARS.get(kind, "Any")


def union(members: list[str]) -> str:
    unique = list(dict.fromkeys(members))
    return unique[0] if len(unique) == 1 else " | ".join(unique)


def docstring(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    lines = text.replace('"""', "'''").replace("\\", "\\\\").splitlines()
    return [f'{indent}"""{lines[0]}'] + [f"{indent}{line}".rstrip() for line in lines[1:]] + [f'{indent}"""']


def model(name: str, schema: dict) -> list[str]:
    properties = schema.get("properties")
    if schema.get("type") == "object" and properties:
        required = set(schema.get("required", []))
        valid = all(p.isidentifier() and not keyword.iskeyword(p) for p in properties)
        if not valid:
            # Members that are not Python names (`camelCase` is fine; `a-b` is not): the functional form.
            fields = ", ".join(
                f"{json.dumps(p)}: {wrap(annotation(s), p in required)}" for p, s in properties.items()
            )
            return [f"{name} = TypedDict({json.dumps(name)}, {{{fields}}})"]
        out = [f"class {name}(TypedDict):"] + docstring(schema.get("description"), "    ")
        for member, member_schema in properties.items():
            out.append(f"    {member}: {wrap(annotation(member_schema), member in required)}")
            out += docstring(member_schema.get("description"), "    ")
        return out
    return [f"{name}: TypeAlias = {annotation(schema)}"] + docstring(schema.get("description"), "")


def wrap(kind: str, required: bool) -> str:
    return kind if required else f"NotRequired[{kind}]"


def results_limit(document: dict) -> int:
    """The largest `limit` of `GET …/jobs/{id}/results`."""
    for path, item in document["paths"].items():
        if path.endswith("/jobs/{id}/results"):
            for parameter in item["get"]["parameters"]:
                if parameter["name"] == "limit":
                    return parameter["schema"]["maximum"]
    raise SystemExit("the document has no results operation with a `limit`")


def render(document: dict) -> str:
    schemas = document["components"]["schemas"]
    out = [
        '"""The API\'s types, from the server\'s OpenAPI document (`docs/openapi.json`, `components.schemas`).',
        "",
        "Written by `clients/python/scripts/generate_models.py`; do not edit by hand. Objects are `TypedDict`s: the",
        "client returns the JSON it is sent, and these name its members for type checkers and editors.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal, TypeAlias",
        "",
        "from typing_extensions import NotRequired, TypedDict",
        "",
        f"__all__ = {sorted(schemas)!r}",
        "",
        "#: Most URLs one synchronous request carries (`CompanyRequest.liUrls.maxItems`).",
        f"MAX_URLS = {schemas['CompanyRequest']['properties']['liUrls']['maxItems']}",
        "#: Most rows one read of a job's results returns (the results operation's `limit` maximum).",
        f"MAX_RESULT_ROWS = {results_limit(document)}",
    ]
    for name in sorted(schemas):
        out += ["", ""] + model(name, schemas[name])
    return "\n".join(out) + "\n"


def main() -> int:
    text = render(json.loads(DOCUMENT.read_text(encoding="utf-8")))
    if "--check" in sys.argv:
        if MODELS.read_text(encoding="utf-8") != text:
            print(f"{MODELS} is not what {DOCUMENT} makes: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    MODELS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
