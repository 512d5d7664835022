//! One catalog of every server's tools (listed, or saved from an earlier run) and
//! prompts under qualified names, and of their resources and templates. A name two
//! tools (or prompts) would share is reported, and the later one (in the order the
//! servers were added) gets the stable hash suffix instead of being dropped.

use std::collections::HashMap;
use std::sync::Arc;

use super::member::{Member, State};
use super::names::{self, Entry, NameFormat};

/// Two tools that would have shared a qualified name.
#[derive(Debug, PartialEq)]
pub struct Collision {
    pub name: String,
    /// The servers of the tool that kept the name, then of the renamed one.
    pub kept: String,
    pub renamed: String,
    pub renamed_to: String,
}

/// A resource or a resource template, with its server.
pub struct Listed {
    /// The resource's `uri`, or the template's `uriTemplate`.
    pub key: String,
    pub server: String,
    pub json: String,
}

/// Tools or prompts under their qualified names.
#[derive(Default)]
pub struct Named {
    pub entries: Vec<Arc<Entry>>,
    pub collisions: Vec<Collision>,
    index: HashMap<Arc<str>, usize>,
}

impl Named {
    /// Adds `e`, renamed with the stable suffix when its name is taken (the collision
    /// listed); dropped only when the suffixed name is taken too.
    fn push(&mut self, mut e: Arc<Entry>) {
        if let Some(&i) = self.index.get(&e.qualified) {
            let renamed_to: Arc<str> = Arc::from(names::with_suffix(&e.qualified, &e.server, &e.tool));
            self.collisions.push(Collision {
                name: e.qualified.to_string(),
                kept: self.entries[i].server.to_string(),
                renamed: e.server.to_string(),
                renamed_to: renamed_to.to_string(),
            });
            if self.index.contains_key(&renamed_to) {
                return;
            }
            e = Arc::new(Entry {
                qualified: renamed_to,
                server: e.server.clone(),
                tool: e.tool.clone(),
                json: e.json.clone(),
            });
        }
        self.index.insert(e.qualified.clone(), self.entries.len());
        self.entries.push(e);
    }

    pub fn get(&self, qualified: &str) -> Option<&Entry> {
        self.index.get(qualified).map(|&i| &*self.entries[i])
    }

    fn same(&self, other: &Named) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|(a, b)| Arc::ptr_eq(a, b) || (a.qualified == b.qualified && a.json == b.json))
    }

    /// `{"<list>": [{"name", "server", "<item>"}], "collisions": [...]}`, each entry
    /// as its server listed it.
    fn to_json(&self, list: &str, item: &str) -> String {
        let mut out = format!("{{\"{list}\":[");
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&format!(
                "{{\"name\":{},\"server\":{},\"{item}\":{}}}",
                serde_json::Value::from(&*e.qualified),
                serde_json::Value::from(&*e.server),
                e.json
            ));
        }
        out.push_str("],\"collisions\":");
        let c: Vec<serde_json::Value> = self
            .collisions
            .iter()
            .map(|c| serde_json::json!({"name": c.name, "kept": c.kept, "renamed": c.renamed, "renamedTo": c.renamed_to}))
            .collect();
        out.push_str(&serde_json::Value::Array(c).to_string());
        out.push('}');
        out
    }
}

#[derive(Default)]
pub struct Catalog {
    pub tools: Named,
    pub prompts: Named,
    pub resources: Vec<Listed>,
    pub templates: Vec<Listed>,
    /// A URI two servers listed: (the URI, the server that keeps it, the other).
    pub uri_collisions: Vec<(String, String, String)>,
    by_uri: HashMap<String, usize>,
}

impl Catalog {
    pub(super) fn of(members: &[Arc<Member>], format: &Arc<NameFormat>) -> Catalog {
        let mut cat = Catalog::default();
        // Failed servers have no tools; one not started yet may have saved ones.
        for m in members
            .iter()
            .filter(|m| !matches!(m.state(), State::Failed | State::NeedsLogin | State::Disabled))
        {
            let spec = &m.spec;
            for e in m.part(format).iter() {
                cat.tools.push(e.clone());
            }
            let listed = m.lists();
            let server: Arc<str> = Arc::from(spec.name.as_str());
            for (name, json) in &listed.prompts {
                cat.prompts.push(Arc::new(Entry {
                    qualified: Arc::from(format.apply(&spec.name, name)),
                    server: server.clone(),
                    tool: Arc::from(name.as_str()),
                    json: Arc::from(json.as_str()),
                }));
            }
            for (uri, json) in &listed.resources {
                if let Some(&i) = cat.by_uri.get(uri) {
                    let kept = cat.resources[i].server.clone();
                    cat.uri_collisions.push((uri.clone(), kept, spec.name.clone()));
                    continue;
                }
                cat.by_uri.insert(uri.clone(), cat.resources.len());
                cat.resources.push(Listed {
                    key: uri.clone(),
                    server: spec.name.clone(),
                    json: json.clone(),
                });
            }
            cat.templates.extend(listed.templates.iter().map(|(t, json)| Listed {
                key: t.clone(),
                server: spec.name.clone(),
                json: json.clone(),
            }));
        }
        cat
    }

    /// The server a resource URI routes to: the one that listed it, else the one
    /// with the template whose literal start (before its first `{`) is the longest
    /// start of the URI.
    pub fn server_for_uri(&self, uri: &str) -> Option<&str> {
        if let Some(&i) = self.by_uri.get(uri) {
            return Some(&self.resources[i].server);
        }
        self.templates
            .iter()
            .map(|t| (t.key.split('{').next().unwrap_or(""), &t.server))
            .filter(|(start, _)| !start.is_empty() && uri.starts_with(start))
            .max_by_key(|(start, _)| start.len())
            .map(|(_, server)| server.as_str())
    }

    /// `{"resources": [{"uri", "server", "resource"}], "templates": [{"server",
    /// "template"}], "collisions": [{"uri", "kept", "dropped"}]}`, each as listed.
    pub fn resources_json(&self) -> String {
        let list = |items: &[Listed], key: Option<&str>, member: &str| -> String {
            let parts: Vec<String> = items
                .iter()
                .map(|l| {
                    let head = key.map_or(String::new(), |k| {
                        format!(
                            "{}:{},",
                            serde_json::Value::from(k),
                            serde_json::Value::from(l.key.as_str())
                        )
                    });
                    format!(
                        "{{{head}\"server\":{},\"{member}\":{}}}",
                        serde_json::Value::from(l.server.as_str()),
                        l.json
                    )
                })
                .collect();
            format!("[{}]", parts.join(","))
        };
        let collisions: Vec<serde_json::Value> = self
            .uri_collisions
            .iter()
            .map(|(u, k, d)| serde_json::json!({"uri": u, "kept": k, "dropped": d}))
            .collect();
        format!(
            "{{\"resources\":{},\"templates\":{},\"collisions\":{}}}",
            list(&self.resources, Some("uri"), "resource"),
            list(&self.templates, None, "template"),
            serde_json::Value::Array(collisions)
        )
    }

    /// Whether `other` holds other tools, prompts, resources or templates.
    pub(super) fn differs(&self, other: &Catalog) -> bool {
        let same_listed = |a: &Listed, b: &Listed| a.key == b.key && a.json == b.json;
        !self.tools.same(&other.tools)
            || !self.prompts.same(&other.prompts)
            || self.resources.len() != other.resources.len()
            || self.templates.len() != other.templates.len()
            || !self
                .resources
                .iter()
                .zip(&other.resources)
                .all(|(a, b)| same_listed(a, b))
            || !self
                .templates
                .iter()
                .zip(&other.templates)
                .all(|(a, b)| same_listed(a, b))
    }

    /// `{"tools": [{"name", "server", "tool"}], "collisions": [...]}`, each tool as listed.
    pub fn to_json(&self) -> String {
        self.tools.to_json("tools", "tool")
    }

    /// `{"prompts": [{"name", "server", "prompt"}], "collisions": [...]}`, each prompt
    /// as listed.
    pub fn prompts_json(&self) -> String {
        self.prompts.to_json("prompts", "prompt")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(key: &str, server: &str) -> Listed {
        Listed {
            key: key.into(),
            server: server.into(),
            json: "{}".into(),
        }
    }

    fn entry(qualified: &str, server: &str) -> Arc<Entry> {
        Arc::new(Entry {
            qualified: qualified.into(),
            server: server.into(),
            tool: "t".into(),
            json: "{}".into(),
        })
    }

    #[test]
    fn a_taken_name_is_renamed_and_listed() {
        let mut n = Named::default();
        n.push(entry("a__t", "a"));
        n.push(entry("a__t", "b"));
        assert_eq!(n.entries.len(), 2);
        assert_eq!(n.collisions.len(), 1);
        let renamed = &n.collisions[0].renamed_to;
        assert!(renamed.starts_with("a__t_") && n.get(renamed).is_some());
        assert_eq!(&*n.get("a__t").unwrap().server, "a");
        let json: serde_json::Value = serde_json::from_str(&n.to_json("prompts", "prompt")).unwrap();
        assert_eq!(json["prompts"][1]["server"], "b");
        assert_eq!(json["collisions"][0]["renamedTo"], renamed.as_str());
    }

    #[test]
    fn a_uri_goes_to_its_lister_else_the_longest_template() {
        let mut cat = Catalog::default();
        cat.resources.push(listed("file:///a/x", "listed"));
        cat.by_uri.insert("file:///a/x".into(), 0);
        cat.templates.push(listed("file:///{path}", "short"));
        cat.templates.push(listed("file:///a/{name}", "long"));
        cat.templates.push(listed("{anything}", "empty"));
        assert_eq!(cat.server_for_uri("file:///a/x"), Some("listed"));
        assert_eq!(cat.server_for_uri("file:///a/y"), Some("long"));
        assert_eq!(cat.server_for_uri("file:///b"), Some("short"));
        assert_eq!(
            cat.server_for_uri("https://h/"),
            None,
            "a template with no literal start fits nothing"
        );
    }
}
