//! DPoP (RFC 9449): a P-256 key per client, and a proof signed for each request
//! that uses a DPoP-bound token and each token request (`htm`, `htu` without
//! query or fragment, `iat`, a fresh `jti`, `ath` with a token, the server's
//! nonce when it gave one).

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::SystemRandom;
use url::Url;

use super::sign::Signer;
use crate::error::{Error, Result, Status};

/// The client's DPoP key and the nonces servers handed out.
pub struct Dpop {
    key: Arc<Signer>,
    /// The proof header: the public key is the same in every proof.
    header: serde_json::Value,
    /// The authorization server's latest `DPoP-Nonce`.
    pub as_nonce: Mutex<Option<String>>,
    /// The MCP server's latest `DPoP-Nonce`.
    pub rs_nonce: Mutex<Option<String>>,
}

impl Dpop {
    /// Proofs signed with `key`: the host's key or signer, or a fresh key pair.
    pub fn new(key: Option<Arc<Signer>>) -> Result<Dpop> {
        let key = match key {
            Some(k) => k,
            None => Arc::new(Signer::generate()?),
        };
        let header = serde_json::json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": key.jwk()});
        Ok(Dpop {
            key,
            header,
            as_nonce: Mutex::new(None),
            rs_nonce: Mutex::new(None),
        })
    }

    /// A proof for `method` on `url`, bound to `token` when given.
    pub async fn proof(&self, method: &str, url: &Url, token: Option<&str>, nonce: Option<&str>) -> Result<String> {
        let mut htu = url.clone();
        htu.set_query(None);
        htu.set_fragment(None);
        let mut jti = [0u8; 16];
        ring::rand::SecureRandom::fill(&SystemRandom::new(), &mut jti)
            .map_err(|_| Error::new(Status::MCPC_ERR_AUTH, "no randomness for a DPoP proof"))?;
        let iat = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let mut claims = serde_json::json!({
            "jti": URL_SAFE_NO_PAD.encode(jti), "htm": method, "htu": htu.as_str(), "iat": iat,
        });
        if let Some(t) = token {
            let hash = ring::digest::digest(&ring::digest::SHA256, t.as_bytes());
            claims["ath"] = URL_SAFE_NO_PAD.encode(hash.as_ref()).into();
        }
        if let Some(n) = nonce {
            claims["nonce"] = n.into();
        }
        self.key.jwt(self.header.clone(), &claims).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_with_its_embedded_key_and_binds_the_token() {
        let block = |f| {
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(f)
        };
        let d = Dpop::new(None).unwrap();
        let url = Url::parse("https://mcp.test/mcp?x=1#f").unwrap();
        let p = block(d.proof("POST", &url, Some("tok"), Some("n1"))).unwrap();
        let header = jsonwebtoken::decode_header(&p).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.unwrap();
        let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        v.required_spec_claims.clear();
        v.validate_exp = false;
        let c = jsonwebtoken::decode::<serde_json::Value>(&p, &key, &v).unwrap().claims;
        assert_eq!(c["htu"], "https://mcp.test/mcp");
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["nonce"], "n1");
        let hash = ring::digest::digest(&ring::digest::SHA256, b"tok");
        assert_eq!(c["ath"], URL_SAFE_NO_PAD.encode(hash.as_ref()));
        let q = block(d.proof("POST", &url, None, None)).unwrap();
        let c2 = jsonwebtoken::decode::<serde_json::Value>(&q, &key, &v).unwrap().claims;
        assert_ne!(c["jti"], c2["jti"]);
        assert!(c2.get("ath").is_none());
    }
}
