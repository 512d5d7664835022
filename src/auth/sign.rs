//! ES256 signatures for DPoP proofs and client assertions: with a key of mcpc's
//! own (zeroized when dropped), or by the host's signer (an HSM, the OS key
//! store), whose every signature is checked against the public key the host named
//! before it goes out. Why not jsonwebtoken: docs/decisions/0018.

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::{Signer as _, Verifier as _};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey};
use zeroize::Zeroizing;

use crate::error::{Error, Result, Status};

/// The host's signer: ECDSA P-256 over the SHA-256 of the bytes given, the
/// signature raw (r and s, 32 bytes each) or DER; None when it cannot.
pub type SignFn = Arc<dyn Fn(&[u8]) -> Option<Vec<u8>> + Send + Sync>;

enum Key {
    Own(SigningKey),
    Host(SignFn, VerifyingKey),
}

/// A P-256 signing key, mcpc's own or the host's.
pub struct Signer {
    key: Key,
    /// The public key, as an uncompressed point.
    public: Vec<u8>,
}

/// The bytes of the PEM block labelled `label`. Lines of any length are taken,
/// as OpenSSL takes them; the bytes are cleared when dropped, since a private
/// key's are secret. (The pkcs8 crate's own reader wants lines of 64.)
fn pem_body(pem: &str, label: &str) -> Option<Zeroizing<Vec<u8>>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let (_, rest) = pem.split_once(begin.as_str())?;
    let (body, _) = rest.split_once(end.as_str())?;
    // Made in one allocation: a string grown by collecting would leave copies behind.
    let mut text = Zeroizing::new(String::with_capacity(body.len()));
    body.split_ascii_whitespace().for_each(|part| text.push_str(part));
    let mut der = Zeroizing::new(Vec::with_capacity(text.len()));
    base64::engine::general_purpose::STANDARD
        .decode_vec(text.as_bytes(), &mut der)
        .ok()?;
    Some(der)
}

fn not_a_key(what: &str) -> Error {
    Error::new(Status::MCPC_ERR_INVALID_ARG, format!("the key is not a {what}"))
}

impl Signer {
    /// A fresh key pair: a random scalar, drawn again in the rare case it is out
    /// of range, held only in buffers that are cleared.
    pub fn generate() -> Result<Signer> {
        let rng = ring::rand::SystemRandom::new();
        let mut bytes = Zeroizing::new([0u8; 32]);
        loop {
            ring::rand::SecureRandom::fill(&rng, &mut bytes[..])
                .map_err(|_| Error::new(Status::MCPC_ERR_AUTH, "no randomness for a key"))?;
            if let Ok(key) = SigningKey::from_slice(&bytes[..]) {
                return Self::own_key(key);
            }
        }
    }

    /// The host's PKCS#8 P-256 private key (PEM).
    pub fn from_pem(pem: &str) -> Result<Signer> {
        let what = "PKCS#8 PEM P-256 private key";
        Self::own(&pem_body(pem, "PRIVATE KEY").ok_or_else(|| not_a_key(what))?, what)
    }

    fn own(pkcs8: &[u8], what: &str) -> Result<Signer> {
        Self::own_key(SigningKey::from_pkcs8_der(pkcs8).map_err(|_| not_a_key(what))?)
    }

    fn own_key(key: SigningKey) -> Result<Signer> {
        let public = key.verifying_key().to_encoded_point(false).as_bytes().to_vec();
        Ok(Signer {
            key: Key::Own(key),
            public,
        })
    }

    /// The host's signer, for the P-256 public key `public_pem` (SubjectPublicKeyInfo PEM).
    pub fn host(public_pem: &str, sign: SignFn) -> Result<Signer> {
        let what = "P-256 public key in PEM (BEGIN PUBLIC KEY)";
        let der = pem_body(public_pem, "PUBLIC KEY").ok_or_else(|| not_a_key(what))?;
        let key = VerifyingKey::from_public_key_der(&der).map_err(|_| not_a_key(what))?;
        let public = key.to_encoded_point(false).as_bytes().to_vec();
        Ok(Signer {
            key: Key::Host(sign, key),
            public,
        })
    }

    /// The public key as a JWK (RFC 7518 §6.2).
    pub fn jwk(&self) -> serde_json::Value {
        let (x, y) = self.public[1..].split_at(32);
        serde_json::json!({
            "kty": "EC", "crv": "P-256", "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y),
        })
    }

    /// A compact JWS (RFC 7515) of `claims` with `header` (its `alg` set to ES256).
    /// The host's signer runs on a blocking thread; a hung one is bounded by the
    /// timeout of whatever waits for this.
    pub async fn jwt(&self, mut header: serde_json::Value, claims: &serde_json::Value) -> Result<String> {
        header["alg"] = "ES256".into();
        let mut jws = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature: Vec<u8> = match &self.key {
            Key::Own(k) => Signature::to_vec(&k.sign(jws.as_bytes())),
            Key::Host(sign, public) => {
                let (sign, input) = (sign.clone(), jws.clone().into_bytes());
                let failed = |why: &str| Error::new(Status::MCPC_ERR_AUTH, format!("the host's signer {why}"));
                let raw = tokio::task::spawn_blocking(move || sign(&input))
                    .await
                    .ok()
                    .flatten()
                    .ok_or_else(|| failed("gave no signature"))?;
                let s = Signature::from_slice(&raw)
                    .or_else(|_| Signature::from_der(&raw))
                    .map_err(|_| failed("gave no ES256 signature (64 bytes raw, or DER)"))?;
                public
                    .verify(jws.as_bytes(), &s)
                    .map_err(|_| failed("gave a signature that its public key does not verify"))?;
                s.to_vec()
            }
        };
        jws.push('.');
        jws.push_str(&URL_SAFE_NO_PAD.encode(signature));
        Ok(jws)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The claims, verified by jsonwebtoken with the public key as a JWK.
    fn verified(s: &Signer, jwt: &str) -> serde_json::Value {
        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(s.jwk()).unwrap();
        let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        v.required_spec_claims.clear();
        v.validate_exp = false;
        jsonwebtoken::decode::<serde_json::Value>(jwt, &key, &v).unwrap().claims
    }

    fn block<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn own_keys_sign_what_jsonwebtoken_verifies() {
        let s = Signer::generate().unwrap();
        let jwt = block(s.jwt(serde_json::json!({"typ": "JWT"}), &serde_json::json!({"a": 1}))).unwrap();
        assert_eq!(verified(&s, &jwt)["a"], 1);
    }

    /// A P-256 key for the tests' host signers, and its public key in PEM.
    fn test_key() -> (SigningKey, String) {
        use p256::pkcs8::EncodePublicKey;
        let Key::Own(k) = Signer::generate().unwrap().key else {
            unreachable!()
        };
        let pem = k.verifying_key().to_public_key_pem(Default::default()).unwrap();
        (k, pem)
    }

    #[test]
    fn a_host_signer_may_give_raw_or_der_and_is_verified() {
        let (k, pem) = test_key();
        for der in [false, true] {
            let k = k.clone();
            let h = Signer::host(
                &pem,
                Arc::new(move |d| {
                    let s: Signature = k.sign(d);
                    Some(if der {
                        s.to_der().as_bytes().to_vec()
                    } else {
                        s.to_vec()
                    })
                }),
            )
            .unwrap();
            let jwt = block(h.jwt(serde_json::json!({}), &serde_json::json!({"b": 2}))).unwrap();
            assert_eq!(verified(&h, &jwt)["b"], 2);
        }
        // A signature by another key, garbage, or none: each a clear error.
        let (other, _) = test_key();
        let wrong: SignFn = Arc::new(move |d| Some(Signature::to_vec(&other.sign(d))));
        let cases: [(SignFn, &str); 3] = [
            (wrong, "does not verify"),
            (Arc::new(|_| Some(vec![1, 2, 3])), "no ES256 signature"),
            (Arc::new(|_| None), "gave no signature"),
        ];
        for (f, want) in cases {
            let h = Signer::host(&pem, f).unwrap();
            let e = block(h.jwt(serde_json::json!({}), &serde_json::json!({}))).unwrap_err();
            assert_eq!(e.status, Status::MCPC_ERR_AUTH);
            assert!(e.message.contains(want), "{}", e.message);
        }
    }

    #[test]
    fn keys_that_are_not_p256_are_refused() {
        assert!(Signer::from_pem("not a key").is_err());
        assert!(Signer::host(
            "-----BEGIN PUBLIC KEY-----\nAA==\n-----END PUBLIC KEY-----\n",
            Arc::new(|_| None)
        )
        .is_err());
    }
}
