//! One catalog of every server's tools (listed, or saved from an earlier run) under qualified names. A name two tools
//! would share is reported, and the later one (in the order the servers were added)
//! gets the stable hash suffix instead of being dropped.

use std::collections::HashMap;
use std::sync::Arc;

use super::member::{Member, State};
use super::names;

/// One tool of the catalog.
pub struct Entry {
    pub qualified: String,
    pub server: String,
    /// The tool's name as its server gave it.
    pub tool: String,
    /// The tool as its server listed it.
    pub json: String,
}

/// Two tools that would have shared a qualified name.
#[derive(Debug, PartialEq)]
pub struct Collision {
    pub name: String,
    /// The servers of the tool that kept the name, then of the renamed one.
    pub kept: String,
    pub renamed: String,
    pub renamed_to: String,
}

#[derive(Default)]
pub struct Catalog {
    pub entries: Vec<Entry>,
    pub collisions: Vec<Collision>,
    index: HashMap<String, usize>,
}

impl Catalog {
    pub(super) fn of(members: &[Arc<Member>]) -> Catalog {
        let mut cat = Catalog::default();
        // Failed servers have no tools; one not started yet may have saved ones.
        for m in members
            .iter()
            .filter(|m| !matches!(m.state(), State::Failed | State::NeedsLogin | State::Disabled))
        {
            let spec = &m.spec;
            for t in m.tools().iter() {
                if !names::admitted(&t.name, spec.include.as_deref(), &spec.exclude) {
                    continue;
                }
                let mut q = names::qualify(&spec.name, &t.name);
                if let Some(&i) = cat.index.get(&q) {
                    let renamed_to = names::with_suffix(&q, &spec.name, &t.name);
                    cat.collisions.push(Collision {
                        name: q.clone(),
                        kept: cat.entries[i].server.clone(),
                        renamed: spec.name.clone(),
                        renamed_to: renamed_to.clone(),
                    });
                    if cat.index.contains_key(&renamed_to) {
                        continue;
                    }
                    q = renamed_to;
                }
                cat.index.insert(q.clone(), cat.entries.len());
                cat.entries.push(Entry {
                    qualified: q,
                    server: spec.name.clone(),
                    tool: t.name.clone(),
                    json: t.json().to_string(),
                });
            }
        }
        cat
    }

    pub fn get(&self, qualified: &str) -> Option<&Entry> {
        self.index.get(qualified).map(|&i| &self.entries[i])
    }

    pub(super) fn names(&self) -> Vec<(&str, &str)> {
        self.entries
            .iter()
            .map(|e| (e.qualified.as_str(), e.json.as_str()))
            .collect()
    }

    /// `{"tools": [{"name", "server", "tool"}], "collisions": [...]}`, each tool as listed.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"tools\":[");
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&format!(
                "{{\"name\":{},\"server\":{},\"tool\":{}}}",
                serde_json::Value::from(e.qualified.as_str()),
                serde_json::Value::from(e.server.as_str()),
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
