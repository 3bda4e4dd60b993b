#!/usr/bin/env python3
"""Writes a HEAD operation beside every GET operation of the OpenAPI document (issue #44 item 5).

The server answers HEAD on every GET route with the GET's status and headers and no body (RFC 9110 §9.3.2), so each
HEAD operation is its GET's parameters, security and responses without their content. Run after changing a GET
operation; `--check` exits 1 when the document is not what this script would write (SystemTests checks the same).

    python3 scripts/openapi_head.py [--check]
"""
import copy
import json
import re
import sys

PATH = "Sources/TouchstoneServer/Resources/openapi.json"


def head_of(get, components):
    head = copy.deepcopy(get)
    head["operationId"] = get["operationId"] + "Head"
    head["summary"] = get.get("summary", get["operationId"]) + " (HEAD: headers only)"
    head.pop("description", None)
    responses = {}
    for status, response in get["responses"].items():
        if "$ref" in response:
            response = components["responses"][response["$ref"].split("/")[-1]]
        response = copy.deepcopy(response)
        response.pop("content", None)
        responses[status] = response
    head["responses"] = responses
    return head


def main():
    with open(PATH, encoding="utf-8") as f:
        text = f.read()
    document = json.loads(text)
    for path, item in document["paths"].items():
        if "get" in item:
            item["head"] = head_of(item["get"], document.get("components", {}))
        else:
            item.pop("head", None)
    written = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    # Characters beyond the BMP as JSON escapes (the address pattern's invisible tag and private-use characters).
    written = re.sub("[\U00010000-\U0010FFFF]", lambda m: json.dumps(m.group(0)).strip('"'), written)
    if "--check" in sys.argv:
        if written != text:
            print("openapi_head: the document's HEAD operations are not their GETs' (run scripts/openapi_head.py)", file=sys.stderr)
            sys.exit(1)
        return
    with open(PATH, "w", encoding="utf-8") as f:
        f.write(written)


main()
