//! Skills (`io.modelcontextprotocol/skills`): the server's listing (`skills/list`,
//! paged, kept for its `ttlMs`) and entries (`skills/get`), each checked before it is
//! held; a skill's files read only as the held entry lists them, each checked against
//! its `size` and sha256 `digest` before it is handed out, and a `SKILL.md` also
//! against the entry's frontmatter; directories read only where the server declared
//! `directoryRead`. Nothing is fetched ahead of need. The held entries are this
//! client's (one server), by their URI.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::{Client, Control};
use crate::error::{quote, Error, Result, Status};
use crate::result::{Body, Contents};

/// The extension's id.
pub const SKILLS: &str = "io.modelcontextprotocol/skills";
/// The most files one skill may list, and their total size (the extension's limits).
const MAX_FILES: usize = 512;
const MAX_TOTAL: u64 = 16 << 20;

/// A file of a skill, as its entry lists it.
struct File {
    digest: [u8; 32],
    size: u64,
}

/// A skill's entry, checked.
pub(super) struct Skill {
    /// Its `SKILL.md` URI; the directory it names is the skill's root.
    uri: String,
    root: String,
    frontmatter: Map<String, Value>,
    /// By URI; `None` for a `"dynamic"` skill, which cannot be verified.
    files: Option<HashMap<String, File>>,
}

fn integrity(message: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_INTEGRITY, message)
}

fn protocol(message: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_PROTOCOL, message)
}

/// `name` by the Agent Skills rules: 1 to 64 of `[a-z0-9-]`, no leading, trailing
/// or doubled hyphen.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// A `digest`: `sha256:` and 64 lowercase hex digits.
fn parse_digest(text: &str) -> Option<[u8; 32]> {
    let hex = text.strip_prefix("sha256:")?;
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

impl Skill {
    /// Reads and checks one entry of `skills/list` or `skills/get`.
    fn read(entry: &str) -> Result<Skill> {
        let v: Value = serde_json::from_str(entry).map_err(|e| protocol(format!("a skill entry is not JSON: {e}")))?;
        let uri = v
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| protocol("a skill entry has no uri"))?;
        let ctx = |why: String| protocol(format!("skill {}: {why}", quote(uri)));
        let root = uri
            .strip_suffix("/SKILL.md")
            .filter(|r| !r.is_empty() && !r.ends_with('/'))
            .ok_or_else(|| ctx("its uri does not name a SKILL.md".into()))?;
        let frontmatter = v
            .get("frontmatter")
            .and_then(Value::as_object)
            .ok_or_else(|| ctx("no frontmatter object".into()))?;
        let name = frontmatter.get("name").and_then(Value::as_str).unwrap_or_default();
        if !valid_name(name) {
            return Err(ctx(format!("its name {} is not a valid skill name", quote(name))));
        }
        if root.rsplit('/').next() != Some(name) {
            return Err(ctx(format!(
                "its name {} is not the last segment of its path",
                quote(name)
            )));
        }
        let description = frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if description.is_empty() || description.chars().count() > 1024 {
            return Err(ctx("its description is empty or longer than 1024 characters".into()));
        }
        let files = match v.get("resources") {
            Some(Value::String(s)) if s == "dynamic" => None,
            Some(Value::Array(items)) => Some(Self::files(uri, root, items).map_err(ctx)?),
            _ => return Err(ctx("resources is neither a list nor \"dynamic\"".into())),
        };
        Ok(Skill {
            uri: uri.to_string(),
            root: root.to_string(),
            frontmatter: frontmatter.clone(),
            files,
        })
    }

    /// A skill's file list: complete (its SKILL.md included), every file within the
    /// skill's directory once, within the extension's limits.
    fn files(uri: &str, root: &str, items: &[Value]) -> std::result::Result<HashMap<String, File>, String> {
        if items.len() > MAX_FILES {
            return Err(format!("it lists {} files, over {MAX_FILES}", items.len()));
        }
        let mut files = HashMap::new();
        let mut total = 0u64;
        for item in items {
            let file_uri = item.get("uri").and_then(Value::as_str).ok_or("a file without a uri")?;
            let inside = file_uri
                .strip_prefix(root)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|rest| {
                    !rest.is_empty() && !rest.split('/').any(|s| s.is_empty() || s == "." || s == "..")
                });
            if !inside {
                return Err(format!("file {} is outside the skill", quote(file_uri)));
            }
            let digest = item
                .get("digest")
                .and_then(Value::as_str)
                .and_then(parse_digest)
                .ok_or_else(|| format!("file {} has no sha256 digest", quote(file_uri)))?;
            let size = item
                .get("size")
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("file {} has no size", quote(file_uri)))?;
            total = total.saturating_add(size);
            if files.insert(file_uri.to_string(), File { digest, size }).is_some() {
                return Err(format!("file {} is listed twice", quote(file_uri)));
            }
        }
        if total > MAX_TOTAL {
            return Err(format!("its files hold {total} bytes, over {MAX_TOTAL}"));
        }
        if !files.contains_key(uri) {
            return Err("its files do not include its SKILL.md".into());
        }
        Ok(files)
    }
}

/// The YAML frontmatter at the top of a `SKILL.md`, as JSON.
fn frontmatter_of(text: &str) -> std::result::Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("it does not begin with a --- line")?;
    let end = rest
        .match_indices("---")
        .find(|(i, _)| {
            (*i == 0 || rest.as_bytes()[i - 1] == b'\n') && {
                let after = &rest[i + 3..];
                after.is_empty() || after.starts_with('\n') || after.starts_with("\r\n")
            }
        })
        .map(|(i, _)| i)
        .ok_or("its frontmatter has no closing --- line")?;
    let docs =
        yaml_rust2::YamlLoader::load_from_str(&rest[..end]).map_err(|e| format!("its frontmatter is not YAML: {e}"))?;
    match docs.first().map(yaml_to_json) {
        Some(Value::Object(m)) => Ok(m),
        _ => Err("its frontmatter is not a mapping".into()),
    }
}

fn yaml_to_json(y: &yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match y {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(a) => Value::Array(a.iter().map(yaml_to_json).collect()),
        Yaml::Hash(h) => Value::Object(
            h.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s.clone(),
                        other => yaml_to_json(other).to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

/// A result's entries (`skills` or `skill`) as the server sent them, and its paging.
#[derive(Deserialize)]
struct Page<'a> {
    #[serde(borrow, default)]
    skills: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    skill: Option<&'a RawValue>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
    #[serde(rename = "ttlMs", default)]
    ttl_ms: Option<f64>,
}

impl Client {
    /// The server's settings of the skills extension; `MCPC_ERR_NOT_SUPPORTED` when it
    /// declared none (the methods are called only after the declaration).
    fn skills_settings(&self) -> Result<Map<String, Value>> {
        let offered = super::extensions::offered(self.session.init_result.get())
            .and_then(|ext| serde_json::from_str::<Map<String, Value>>(ext).ok())
            .and_then(|mut m| m.remove(SKILLS));
        match offered {
            Some(Value::Object(settings)) => Ok(settings),
            Some(_) => Err(protocol(format!("the server's settings of {SKILLS} are not an object"))),
            None => Err(Error::new(
                Status::MCPC_ERR_NOT_SUPPORTED,
                format!("the server does not offer {SKILLS}"),
            )),
        }
    }

    /// Holds `entry` (checked); its JSON as sent, or `None` when it cannot be loaded.
    fn hold_skill(&self, entry: &RawValue) -> Option<String> {
        match Skill::read(entry.get()) {
            Ok(skill) => {
                let mut held = self.skills.lock().unwrap_or_else(|p| p.into_inner());
                held.insert(skill.uri.clone(), Arc::new(skill));
                Some(entry.get().to_string())
            }
            Err(e) => {
                log::warn!("skills: an entry cannot be loaded: {}", e.message);
                None
            }
        }
    }

    /// `skills/list`, every page: the entries that can be loaded, as one JSON array of
    /// the entries as sent (the others are left out, with a warning in the log). Kept
    /// for the listing's shortest `ttlMs`.
    pub async fn list_skills(&self, ctl: &Control) -> Result<String> {
        use super::cache::{Keep, Kind, Value as Kept};
        self.skills_settings()?;
        if !ctl.bypass_cache {
            if let Some(Kept::Json(kept)) = self.shared.cache.get(Kind::Skills) {
                return Ok(kept.to_string());
            }
        }
        let epoch = self.shared.cache.epoch(Kind::Skills);
        let mut out = Vec::new();
        let mut ttl: Option<f64> = None;
        self.each_page("skills/list", &Map::new(), ctl, |text, page| {
            let p: Page<'_> =
                serde_json::from_str(text).map_err(|e| protocol(format!("skills/list page {page}: {e}")))?;
            out.extend(p.skills.iter().filter_map(|entry| self.hold_skill(entry)));
            let page_ttl = p.ttl_ms.unwrap_or(0.0);
            ttl = Some(ttl.map_or(page_ttl, |t| t.min(page_ttl)));
            Ok(p.next_cursor)
        })
        .await?;
        let json = format!("[{}]", out.join(","));
        if let Some(ms) = ttl.filter(|t| *t >= 1.0) {
            let keep = Keep::For(std::time::Duration::from_millis(ms as u64));
            self.shared
                .cache
                .put(Kind::Skills, epoch, Kept::Json(json.as_str().into()), keep);
        }
        Ok(json)
    }

    /// Requests `method` with `params` page by page (`cursor`, `nextCursor`) within the
    /// call's one timeout; `page` reads each page's result (its JSON text and number)
    /// and gives its `nextCursor`. A cursor seen before, or too many pages, is an error.
    async fn each_page(
        &self,
        method: &str,
        params: &Map<String, Value>,
        ctl: &Control,
        mut page: impl FnMut(&str, usize) -> Result<Option<String>>,
    ) -> Result<()> {
        let deadline = Instant::now() + self.timeout_of(ctl);
        let mut cursors = HashSet::new();
        let mut cursor: Option<String> = None;
        for n in 1..=self.options.max_pages {
            let mut params = params.clone();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            let page_ctl = Control {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                ..ctl.clone()
            };
            let raw = self.request_method(method, &params, &page_ctl).await?.into_raw()?;
            match page(raw.get(), n)? {
                None => return Ok(()),
                Some(next) => cursor = Some(super::listing::unseen_cursor(&mut cursors, next, method, n)?),
            }
        }
        Err(Error::new(
            Status::MCPC_ERR_TOO_MANY_PAGES,
            format!("{method}: more than {} pages; stopped", self.options.max_pages),
        ))
    }

    /// `skills/get` of the skill whose `SKILL.md` is `uri`: its entry as sent, checked
    /// and held (replacing what was held for it).
    pub async fn get_skill(&self, uri: &str, ctl: &Control) -> Result<String> {
        self.skills_settings()?;
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_string()));
        let raw = self.request_method("skills/get", &params, ctl).await?.into_raw()?;
        let p: Page<'_> = serde_json::from_str(raw.get()).map_err(|e| protocol(format!("skills/get: {e}")))?;
        let entry = p.skill.ok_or_else(|| protocol("skills/get: the result has no skill"))?;
        let skill = Skill::read(entry.get()).map_err(|e| e.context("skills/get"))?;
        if skill.uri != uri {
            return Err(protocol(format!(
                "skills/get {}: the server answered for {}",
                quote(uri),
                quote(&skill.uri)
            )));
        }
        self.skills
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(skill.uri.clone(), Arc::new(skill));
        Ok(entry.get().to_string())
    }

    /// The held skill that lists `uri` as one of its files, or whose directory holds it.
    fn skill_of(&self, uri: &str) -> Option<Arc<Skill>> {
        let held = self.skills.lock().unwrap_or_else(|p| p.into_inner());
        held.values()
            .find(|s| s.files.as_ref().map_or(uri == s.uri, |f| f.contains_key(uri)))
            .or_else(|| {
                held.values()
                    .find(|s| uri == s.root || uri.strip_prefix(&s.root).is_some_and(|r| r.starts_with('/')))
            })
            .cloned()
    }

    /// Reads a file of a held skill and checks it before handing it out: its size and
    /// sha256 digest against the entry's, and for a `SKILL.md` its frontmatter against
    /// the entry's, field by field. A file no held entry lists is refused before
    /// anything is sent; so is any file of a `"dynamic"` skill, which cannot be checked.
    /// Every failure is `MCPC_ERR_INTEGRITY`, and its content is not handed out.
    pub async fn read_skill_file(&self, uri: &str, ctl: &Control) -> Result<Contents> {
        self.skills_settings()?;
        let skill = self.skill_of(uri).ok_or_else(|| {
            integrity(format!(
                "{} is in no skill listed (list the skills, or get the skill, first)",
                quote(uri)
            ))
        })?;
        let file = match &skill.files {
            Some(files) => files.get(uri).ok_or_else(|| {
                integrity(format!(
                    "{} is not a file skill {} lists",
                    quote(uri),
                    quote(&skill.uri)
                ))
            })?,
            None => {
                return Err(integrity(format!(
                    "skill {} lists its files as dynamic: they cannot be verified",
                    quote(&skill.uri)
                )))
            }
        };
        let contents = self.read_resource(uri, ctl).await?;
        let mut items = contents.items.iter().filter(|c| c.uri == uri);
        let (Some(item), None) = (items.next(), items.next()) else {
            return Err(integrity(format!(
                "resources/read {}: not exactly one content for it",
                quote(uri)
            )));
        };
        let bytes: &[u8] = match &item.body {
            Body::Text(t) => t.as_bytes(),
            Body::Blob(b) => b,
        };
        if bytes.len() as u64 != file.size {
            return Err(integrity(format!(
                "{}: {} bytes where the listing says {}",
                quote(uri),
                bytes.len(),
                file.size
            )));
        }
        let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
        if digest.as_ref() != file.digest {
            return Err(integrity(format!(
                "{}: its sha256 digest is not the listing's",
                quote(uri)
            )));
        }
        if uri == skill.uri {
            let text = std::str::from_utf8(bytes).map_err(|_| integrity(format!("{}: not UTF-8 text", quote(uri))))?;
            let found = frontmatter_of(text).map_err(|why| integrity(format!("{}: {why}", quote(uri))))?;
            if found != skill.frontmatter {
                let field = found
                    .keys()
                    .chain(skill.frontmatter.keys())
                    .find(|k| found.get(*k) != skill.frontmatter.get(*k))
                    .cloned()
                    .unwrap_or_default();
                return Err(integrity(format!(
                    "{}: its frontmatter differs from the listing's (field {})",
                    quote(uri),
                    quote(&field)
                )));
            }
        }
        Ok(contents)
    }

    /// `resources/directory/read` of `uri`, a directory within a held skill, every page:
    /// one JSON array of the resources as sent. Only when the server declared
    /// `directoryRead: true`; what it lists is not added to any held skill.
    pub async fn read_skill_directory(&self, uri: &str, ctl: &Control) -> Result<String> {
        let settings = self.skills_settings()?;
        if settings.get("directoryRead") != Some(&Value::Bool(true)) {
            return Err(Error::new(
                Status::MCPC_ERR_NOT_SUPPORTED,
                "the server did not declare directoryRead for skills",
            ));
        }
        if self.skill_of(uri).is_none() {
            return Err(integrity(format!("{} is in no skill listed", quote(uri))));
        }
        #[derive(Deserialize)]
        struct DirPage<'a> {
            #[serde(borrow, default)]
            resources: Vec<&'a RawValue>,
            #[serde(rename = "nextCursor", default)]
            next_cursor: Option<String>,
        }
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_string()));
        let mut out: Vec<String> = Vec::new();
        self.each_page("resources/directory/read", &params, ctl, |text, page| {
            let p: DirPage<'_> = serde_json::from_str(text)
                .map_err(|e| protocol(format!("resources/directory/read page {page}: {e}")))?;
            out.extend(p.resources.iter().map(|r| r.get().to_string()));
            Ok(p.next_cursor)
        })
        .await?;
        Ok(format!("[{}]", out.join(",")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(bytes: &[u8]) -> String {
        let d = ring::digest::digest(&ring::digest::SHA256, bytes);
        format!(
            "sha256:{}",
            d.as_ref().iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    }

    fn entry(files: Value) -> String {
        serde_json::json!({
            "uri": "skill://pdf/SKILL.md",
            "frontmatter": {"name": "pdf", "description": "PDFs"},
            "resources": files,
        })
        .to_string()
    }

    #[test]
    fn entries_checked() {
        let body = b"---\nname: pdf\ndescription: PDFs\n---\nBody\n";
        let good = serde_json::json!([{"uri": "skill://pdf/SKILL.md", "digest": sha(body), "size": body.len()}]);
        let s = Skill::read(&entry(good.clone())).unwrap();
        assert_eq!(s.root, "skill://pdf");
        assert!(Skill::read(&entry(serde_json::json!("dynamic")))
            .unwrap()
            .files
            .is_none());
        let outside = serde_json::json!([
            {"uri": "skill://pdf/SKILL.md", "digest": sha(body), "size": body.len()},
            {"uri": "skill://other/x.md", "digest": sha(b""), "size": 0}
        ]);
        for (bad, why) in [
            (entry(serde_json::json!([])), "do not include its SKILL.md"),
            (entry(outside), "outside the skill"),
            (
                entry(serde_json::json!([{"uri": "skill://pdf/SKILL.md", "digest": "sha256:AB", "size": 1}])),
                "digest",
            ),
            (
                entry(serde_json::json!([{"uri": "skill://pdf/../x", "digest": sha(b""), "size": 0}])),
                "outside",
            ),
            (entry(serde_json::json!(5)), "neither a list"),
            (
                entry(good.clone()).replace("\"name\":\"pdf\"", "\"name\":\"Pdf\""),
                "not a valid skill name",
            ),
            (
                entry(good.clone()).replace("\"name\":\"pdf\"", "\"name\":\"pdg\""),
                "last segment",
            ),
            (entry(good).replace("\"PDFs\"", "\"\""), "description"),
        ] {
            let e = Skill::read(&bad).err().unwrap_or_else(|| panic!("accepted: {bad}"));
            assert!(e.message.contains(why), "{}: {bad}", e.message);
        }
        let many: Vec<Value> = (0..=MAX_FILES)
            .map(|i| serde_json::json!({"uri": format!("skill://pdf/f{i}"), "digest": sha(b""), "size": 0}))
            .collect();
        assert!(Skill::read(&entry(Value::Array(many))).is_err());
        let huge = serde_json::json!([{"uri": "skill://pdf/SKILL.md", "digest": sha(b""), "size": MAX_TOTAL + 1}]);
        assert!(Skill::read(&entry(huge)).is_err());
    }

    #[test]
    fn frontmatter_read() {
        let fm =
            frontmatter_of("---\nname: pdf\ndescription: Extract, fill\nmetadata:\n  k: v\n---\n\nBody\n").unwrap();
        assert_eq!(
            Value::Object(fm),
            serde_json::json!({"name": "pdf", "description": "Extract, fill", "metadata": {"k": "v"}})
        );
        assert!(frontmatter_of("no frontmatter").is_err());
        assert!(frontmatter_of("---\nname: x\n").is_err());
        assert!(frontmatter_of("---\n- a\n---\n").is_err());
        assert!(frontmatter_of("---\nname: [\n---\n").is_err());
        assert_eq!(parse_digest(&sha(b"x")).map(|d| d.len()), Some(32));
        assert!(parse_digest("sha256:12").is_none());
    }
}
