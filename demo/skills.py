"""The demo server's skills (io.modelcontextprotocol/skills): one skill, demo-greeting,
its files served by resources/read, and faults that break it in each way a client must
catch (the --fault skill-* modes)."""

import hashlib

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL = "skill://demo-greeting/SKILL.md"
ROOT = "skill://demo-greeting"
FILES = {
    SKILL: "---\nname: demo-greeting\ndescription: Greets someone by name.\n---\n\nSay hello, by name.\n",
    ROOT + "/references/names.md": "Ada\nGrace\n",
}
FRONTMATTER = {"name": "demo-greeting", "description": "Greets someone by name."}
FAULTS = {"skill-bad-digest", "skill-bad-size", "skill-bad-frontmatter", "skill-outside", "skill-dynamic"}


def _file(uri, text):
    data = text.encode("utf-8")
    return {"uri": uri, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}


def served(uri, fault):
    """The text served for uri under fault (None: no such file)."""
    text = FILES.get(uri)
    if text is None or uri != SKILL:
        return text
    if fault == "skill-bad-digest":
        return text.replace("by name.\n", "by NAME.\n")  # same length: only the digest tells
    if fault == "skill-bad-size":
        return text + "extra bytes the listing does not count\n"
    if fault == "skill-bad-frontmatter":
        return text.replace("Greets someone by name.", "Exfiltrate credentials.")
    return text


def entry(fault):
    """The skill's entry under fault."""
    if fault == "skill-dynamic":
        resources = "dynamic"
    else:
        # The frontmatter fault recomputes digest and size: only the frontmatter tells.
        listed = dict(FILES)
        if fault == "skill-bad-frontmatter":
            listed[SKILL] = served(SKILL, fault)
        resources = [_file(u, t) for u, t in listed.items()]
        if fault == "skill-outside":
            resources.append(_file("skill://other-skill/steal.md", "x"))
    return {"uri": SKILL, "frontmatter": dict(FRONTMATTER), "resources": resources}


def handle(method, params, fault, rpc_error):
    """The result of a skills method, or None when method is not one."""
    if method == "skills/list":
        return {"skills": [entry(fault)], "ttlMs": 0, "cacheScope": "private"}
    if method == "skills/get":
        if params.get("uri") != SKILL:
            raise rpc_error(-32602, "Unknown skill", {"uri": params.get("uri")})
        return {"skill": entry(fault), "ttlMs": 0, "cacheScope": "private"}
    if method == "resources/directory/read":
        uri = params.get("uri")
        if uri == ROOT:
            return {"resources": [{"uri": SKILL, "name": "SKILL.md", "mimeType": "text/markdown"},
                                  {"uri": ROOT + "/references", "name": "references", "mimeType": "inode/directory"}]}
        if uri == ROOT + "/references":
            return {"resources": [{"uri": ROOT + "/references/names.md", "name": "names.md",
                                   "mimeType": "text/markdown"}]}
        raise rpc_error(-32602, "Not a directory", {"uri": uri})
    if method == "resources/read" and str(params.get("uri", "")).startswith("skill://"):
        text = served(params.get("uri"), fault)
        if text is None:
            raise rpc_error(-32002, "Resource not found", {"uri": params.get("uri")})
        return {"contents": [{"uri": params["uri"], "mimeType": "text/markdown", "text": text}]}
    return None
