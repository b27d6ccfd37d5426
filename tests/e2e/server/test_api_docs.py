"""The API's own description against a real `ragsift serve` process on 127.0.0.1: `/docs` is
Swagger UI served from the package (it renders in Chromium with every other host blocked), the
OpenAPI document declares the bearer key where the server asks for one and a response schema
for every route, request examples in Chinese and English, metadata as typed over HTTP as in
Python (lists and dates, then filtered on), and every malformed body answered naming its field."""
from __future__ import annotations

import json
import re
import shutil
from urllib.parse import urlparse

import pytest
from server_process import READ_KEY, WRITE_KEY, ServerProcess, problem, wait_job


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    kb = tmp_path_factory.mktemp("apidocs") / "kb"  # created empty by the server
    with ServerProcess(["--kb", str(kb), "serve", "--no-mcp"]) as srv:
        yield srv


@pytest.fixture(scope="module")
def api(server) -> dict:
    with server.client(None) as c:  # the description needs no key
        r = c.get("/openapi.json")
    assert r.status_code == 200
    return r.json()


def test_docs_load_only_assets_the_server_serves(server):
    with server.client(None) as c:  # the docs need no key either
        page = c.get("/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        html = page.text
        assert not re.search(r"https?://", html), "the page names another host"
        refs = re.findall(r'(?:src|href)="([^"]+)"', html)
        assert sorted(refs) == ["/docs/assets/favicon-32x32.png", "/docs/assets/swagger-ui-bundle.js",
                                "/docs/assets/swagger-ui.css"]
        assert "url: '/openapi.json'" in html and '"validatorUrl": null' in html
        types = {"js": "javascript", "css": "text/css", "png": "image/png"}
        for ref in refs:
            r = c.get(ref)
            assert r.status_code == 200, ref
            assert types[ref.rsplit(".", 1)[1]] in r.headers["content-type"], (ref, r.headers["content-type"])
        assert len(c.get("/docs/assets/swagger-ui-bundle.js").content) > 1_000_000
        license_text = c.get("/docs/assets/LICENSE").text
        assert "Apache License" in license_text and "Version 2.0" in license_text
        assert c.get("/redoc").status_code == 404  # FastAPI's ReDoc page loads from a CDN: not served


def test_the_bearer_key_is_declared_where_the_server_asks_for_it(server, api):
    scheme = api["components"]["securitySchemes"]["bearerAuth"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    ops = {(m.upper(), p): op for p, item in api["paths"].items() for m, op in item.items()}
    assert ops[("GET", "/healthz")]["security"] == [] and ops[("GET", "/readyz")]["security"] == []
    for key in (("POST", "/v1/query"), ("GET", "/v1/documents"), ("GET", "/metrics"), ("POST", "/v1/documents"),
                ("GET", "/v1/kbs/{kb_name}/stats")):
        assert ops[key]["security"] == [{"bearerAuth": []}], key
        assert "401" in ops[key]["responses"]
    assert "403" in ops[("POST", "/v1/documents")]["responses"]  # a read key may not write
    assert "403" in ops[("DELETE", "/v1/documents/{doc_id}")]["responses"]
    assert "403" not in ops[("POST", "/v1/query")]["responses"]  # a read key may ask
    # what the description says is what the server does: every GET without parameters, without a key
    with server.client(None) as c:
        for (method, path), op in ops.items():
            if method == "GET" and "{" not in path:
                status = c.get(path).status_code
                assert (status == 401) == bool(op["security"]), (path, status)
    with server.client(READ_KEY) as c:
        problem(c.post("/v1/documents", json={"documents": [{"id": "x", "text": "y"}]}), 403, "read only")


def test_every_route_has_a_response_schema(api):
    assert len(api["paths"]) >= 30
    for path, item in api["paths"].items():
        for method, op in item.items():
            ok = {code: r for code, r in op["responses"].items() if code.startswith("2")}
            assert ok, (method, path)
            for code, r in ok.items():
                content = r.get("content") or {}
                assert content, (method, path, code)
                for media, body in content.items():
                    schema = body.get("schema") or {}
                    assert "$ref" in schema or schema.get("type") in ("string", "object", "array"), \
                        (method, path, code, media, schema)
            for code, r in op["responses"].items():  # errors are problem bodies, 422 too
                if code[0] in "45":
                    assert list(r["content"]) == ["application/problem+json"], (method, path, code)
    schemas = api["components"]["schemas"]
    assert {"StatsOut", "DocumentView", "IngestReport", "Problem"} <= set(schemas)
    assert "HTTPValidationError" not in schemas
    sync = api["paths"]["/v1/sync"]["post"]["responses"]
    assert sync["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/IngestReport")
    assert sync["202"]["content"]["application/json"]["schema"]["$ref"].endswith("/JobOut")
    assert "text/event-stream" in api["paths"]["/v1/jobs/{job_id}/events"]["get"]["responses"]["200"]["content"]
    assert "text/plain" in api["paths"]["/metrics"]["get"]["responses"]["200"]["content"]


def test_the_query_response_documents_warnings_and_match(api):
    """Why nothing was found and how well anything matched are in /v1/query's described answer."""
    ref = api["paths"]["/v1/query"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    schemas = api["components"]["schemas"]
    response = schemas[ref.rsplit("/", 1)[1]]["properties"]
    assert response["warnings"]["type"] == "array" and response["warnings"]["items"]["type"] == "string"
    assert "did you mean" in response["warnings"]["description"] and "no documents" in response["warnings"]["description"]
    assert response["no_good_match"]["type"] == "boolean" and "match.reason" in response["no_good_match"]["description"]
    [match_ref] = [s["$ref"] for s in response["match"]["anyOf"] if "$ref" in s]
    match = schemas[match_ref.rsplit("/", 1)[1]]["properties"]
    assert {"no_good_match", "reason", "similarity", "term_match", "standout", "min_similarity", "min_term_match",
            "min_standout"} <= set(match)
    assert all(match[name].get("description") for name in match if name != "no_good_match")
    passage = schemas["Passage"]["properties"]
    assert {"similarity", "term_match", "scores"} <= set(passage)


def _cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def test_request_examples_in_chinese_and_english(api):
    query = api["paths"]["/v1/query"]["post"]["requestBody"]["content"]["application/json"]["examples"]
    questions = [ex["value"]["question"] for ex in query.values()]
    assert any(_cjk(q) for q in questions) and any(q.isascii() for q in questions)
    docs = api["paths"]["/v1/documents"]["post"]["requestBody"]["content"]["application/json"]["examples"]
    documents = [d for ex in docs.values() for d in ex["value"]["documents"]]
    assert any(_cjk(d["text"]) for d in documents) and any(d["text"].isascii() for d in documents)
    assert any(isinstance(v, list) for d in documents for v in d["metadata"].values())  # a list field shown
    batch = api["paths"]["/v1/query/batch"]["post"]["requestBody"]["content"]["application/json"]["examples"]
    assert any(_cjk(q["question"]) for ex in batch.values() for q in ex["value"]["queries"])


def _found(c, filter: dict) -> set[str]:
    r = c.post("/v1/query", json={"question": "假期 leave 手册 manual", "filter": filter, "max_passages": 20})
    assert r.status_code == 200, r.text
    return {p["doc_id"] for p in r.json()["passages"]}


def test_metadata_is_typed_over_http_as_in_python(server):
    """Lists of strings and dates as ISO text, as `KnowledgeBase.add_documents` and front matter
    take them: stored as sent, filtered on over HTTP (a date field made by front matter takes
    the ISO text a JSON document carries)."""
    md = "---\npublished: 2024-05-01\ntags: [manual, 手册]\n---\n# Hub manual\n\nHold the reset button for ten seconds.\n"
    with server.client(WRITE_KEY) as c:
        job = wait_job(c, c.post("/v1/files", files=[("files", ("hub.md", md.encode(), "text/markdown"))]).json())
        assert job["state"] == "done", job
        [md_id] = job["report"]["added"]
        r = c.post("/v1/documents", json={"documents": [
            {"id": "leave-zh", "title": "年假制度", "text": "员工每年有十五天带薪年假，需提前两周申请。",
             "metadata": {"tags": ["hr", "假期"], "published": "2024-06-01", "owner": {"team": "hr", "floor": 3}}},
            {"id": "leave-en", "title": "Leave", "text": "Employees get fifteen days of paid leave a year.",
             "metadata": {"tags": ["hr", "leave"], "published": "2023-12-31T09:30:00", "scores": [1, 2.5]}}]})
        assert r.status_code == 202, r.text
        job = wait_job(c, r.json())
        assert job["state"] == "done" and not job["report"]["skipped"], job
        assert sorted(job["report"]["added"]) == ["leave-en", "leave-zh"]

        doc = c.get("/v1/documents/leave-zh").json()
        assert doc["metadata"] == {"tags": ["hr", "假期"], "published": "2024-06-01",
                                   "owner": {"team": "hr", "floor": 3}}  # an object is kept, as in Python
        assert c.get("/v1/documents/leave-en").json()["metadata"]["scores"] == [1, 2.5]
        fields = c.get("/v1/stats").json()["fields"]
        assert fields["tags"] == "list" and fields["published"] == "date"

        assert _found(c, {"tags": {"contains": "假期"}}) == {"leave-zh"}
        assert _found(c, {"tags": {"contains": "hr"}}) == {"leave-zh", "leave-en"}
        assert _found(c, {"tags": {"in": ["manual", "leave"]}}) == {md_id, "leave-en"}
        assert _found(c, {"published": {"gte": "2024-05-15"}}) == {"leave-zh"}
        assert _found(c, {"published": {"lt": "2024-01-01"}}) == {"leave-en"}
        assert _found(c, {"published": "2024-05-01"}) == {md_id}

        deep = json.loads("[" * 20 + "1" + "]" * 20)
        body = problem(c.post("/v1/documents", json={"documents": [{"id": "d", "text": "t", "metadata": {"x": deep}}]}),
                       422, "documents.0.metadata: metadata 'x' is nested deeper than 16 levels")
        assert body["errors"] == [{"loc": "documents.0.metadata", "msg": "metadata 'x' is nested deeper than 16 levels"}]


JSON = "application/json"


@pytest.mark.parametrize("path,content,ctype,detail", [
    # malformed JSON: where
    ("/v1/query", '{"question": "x",}', JSON, "body: not valid JSON at character 17"),
    ("/v1/documents", '{"documents": [{"id": "a" "text": "t"}]}', JSON, "body: not valid JSON at character 26"),
    # no body, not an object, not sent as JSON
    ("/v1/query", "", JSON, "body: the request needs a body: a JSON object"),
    ("/v1/query", '["恢复出厂设置"]', JSON, "body: the body must be a JSON object, not an array"),
    ("/v1/query", '{"question": "x"}', "text/plain", "body: the body was sent as text/plain; send a JSON object "
                                                      "with Content-Type: application/json"),
    # a wrong type: the field, what it should be, what came
    ("/v1/query", '{"question": 42}', JSON, "question: Input should be a valid string; got a number"),
    ("/v1/query", '{"question": "x", "filter": ["a"]}', JSON, "filter: Input should be a JSON object; got an array"),
    ("/v1/query", '{"question": "x", "max_passages": "many"}', JSON,
     "max_passages: Input should be a valid integer"),
    ("/v1/documents", '{"documents": {"id": "a", "text": "t"}}', JSON,
     "documents: Input should be an array; got an object"),
    ("/v1/documents", '{"documents": [{"id": "a", "text": "t", "metadata": ["x"]}]}', JSON,
     "documents.0.metadata: Input should be a JSON object; got an array"),
    # a missing field
    ("/v1/query", '{"max_passages": 2}', JSON, "question: required field missing"),
    ("/v1/documents", '{"documents": [{"id": "a"}]}', JSON, "documents.0.text: required field missing"),
    ("/v1/query/batch", '{"queries": [{"question": "x"}, {}]}', JSON, "queries.1.question: required field missing"),
    # an unknown field: what the object takes, the nearest name
    ("/v1/documents", '{"documents": [{"id": "a", "text": "t", "meta": {}}]}', JSON,
     "documents.0.meta: unknown field; did you mean 'metadata'? this object takes id, text, title, source, metadata"),
    ("/v1/query", '{"question": "x", "max_passage": 3}', JSON,
     "max_passage: unknown field; did you mean 'max_passages'? a query takes question, filter, trace and the "
     "query settings (GET /v1/settings lists them"),
    ("/v1/documents", '{"docs": []}', JSON, "documents: required field missing | docs: unknown field; did you mean "
                                             "'documents'?"),
])
def test_every_body_error_names_the_field(server, path, content, ctype, detail):
    with server.client(WRITE_KEY) as c:
        body = problem(c.post(path, content=content.encode(), headers={"content-type": ctype}), 422, detail)
    assert body["title"] == "Invalid request" and body["errors"], body
    assert body["detail"].startswith(body["errors"][0]["loc"] + ": ")


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def test_swagger_ui_renders_offline_and_authorizes_with_a_key(server):
    from playwright.sync_api import expect, sync_playwright

    executable = shutil.which("chromium")
    assert executable, "the browser tests need Debian's chromium (apt-get install chromium; .ci/run installs it)"
    elsewhere: list[str] = []

    def only_this_server(route):
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:  # the machine is offline, as far as the page knows
            elsewhere.append(route.request.url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.route("**/*", only_this_server)
            page.goto(server.url + "/docs")
            expect(page.locator(".swagger-ui .info .title")).to_contain_text("ragsift")
            paths = page.locator(".opblock .opblock-summary-path")
            expect(paths.first).to_be_visible()
            shown = set(paths.all_inner_texts())
            assert {"/v1/query", "/v1/documents", "/healthz"} <= {s.replace("\u200b", "") for s in shown}, shown
            assert page.locator(".opblock .authorization__btn").count() > 10  # the lock on every keyed route

            page.locator("button.authorize").first.click()  # the Authorize button: the bearer key
            dialog = page.locator(".dialog-ux .modal-ux")
            expect(dialog).to_contain_text("bearerAuth")
            dialog.locator("input").first.fill(WRITE_KEY)
            dialog.locator("button.authorize").click()
            expect(dialog.get_by_role("heading", name="Authorized")).to_be_visible()
            dialog.locator("button.close-modal").click()

            # the key is sent: GET /v1/kbs tried out answers 200 (401 without it)
            op = page.locator(".opblock-get", has=page.locator('.opblock-summary-path[data-path="/v1/kbs"]'))
            op.locator(".opblock-summary").click()
            op.locator("button.try-out__btn").click()
            op.locator("button.execute").click()
            expect(op.locator(".live-responses-table tbody td.response-col_status").first).to_have_text("200")
            expect(op.locator(".live-responses-table .microlight").first).to_contain_text('"default"')

            # POST /v1/query's answer, as the page shows it: warnings and match in its example and its schema
            query = page.locator(".opblock-post", has=page.locator('.opblock-summary-path[data-path="/v1/query"]'))
            query.locator(".opblock-summary").click()
            answer = query.locator(".responses-table tr.response[data-code='200']")
            expect(answer.locator(".example.microlight")).to_contain_text('"warnings": [')
            expect(answer.locator(".example.microlight")).to_contain_text('"match": {')
            answer.locator("button[data-name='model']").click()  # the Schema tab
            model = answer.locator(".model-box")  # QueryResponse, open one level deep
            for name, described in (("warnings", "Why no passage was found"), ("match", "How well the passages match")):
                model.locator("button.json-schema-2020-12-accordion").filter(
                    has=page.get_by_text(name, exact=True)).click()  # the property opens: its description
                expect(model).to_contain_text(described)
            assert not errors, errors
        finally:
            browser.close()
    assert elsewhere == [], elsewhere
