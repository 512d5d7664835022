//! TLS for HTTPS endpoints: the system's roots, read once per process, and a
//! client's own CAs beside them.

use std::sync::{Arc, OnceLock};

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;

use crate::error::{Error, Result, Status};

/// The system's roots, read and parsed once for the process, and shared by every
/// client that adds no CA of its own, so that no client pays the time and memory of
/// a store of its own (docs/performance.md).
pub(super) fn native_roots() -> Arc<rustls::RootCertStore> {
    static ROOTS: OnceLock<Arc<rustls::RootCertStore>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
            Arc::new(roots)
        })
        .clone()
}

/// The TLS settings: the system's roots (unless `system_roots` is false) plus the
/// caller's CAs.
pub(crate) fn tls_config(extra_pem: &[Vec<u8>], system_roots: bool) -> Result<rustls::ClientConfig> {
    let roots = if extra_pem.is_empty() && system_roots {
        native_roots()
    } else {
        Arc::new(own_roots(extra_pem, system_roots)?)
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(Status::MCPC_ERR_TLS, format!("TLS setup failed: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// A client's own roots: the system's (unless `system_roots` is false) and the
/// caller's CAs.
pub(super) fn own_roots(extra_pem: &[Vec<u8>], system_roots: bool) -> Result<rustls::RootCertStore> {
    let mut roots = if system_roots {
        (*native_roots()).clone()
    } else {
        rustls::RootCertStore::empty()
    };
    for pem in extra_pem {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| {
                Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("CA certificate PEM is malformed: {e}"),
                )
            })?;
            roots.add(cert).map_err(|e| {
                Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("CA certificate is not usable: {e}"),
                )
            })?;
            added += 1;
        }
        if added == 0 {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "CA PEM holds no certificate"));
        }
    }
    Ok(roots)
}
