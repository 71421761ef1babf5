//! TLS for every connection loadproof makes or accepts, with rustls (no OpenSSL).
//!
//! Client side (`fire`'s requests and scrapes, `gate`'s upstream): a server's certificate is
//! checked against the platform's trust store, plus a private CA when `--ca-cert` names one;
//! `--insecure` checks nothing and says so — the receipt's protocol records which of the three
//! held (`Tls`), so a reviewer knows whether the answers could have come from anyone on the
//! path. Server side (`sim`, `gate`): `--tls-cert` / `--tls-key` serve `https://`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use loadproof_core::receipt::{Tls, TlsVerify, sha256_hex};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::args::{ServeTlsArgs, TrustArgs};
use crate::input::BadInput;

/// How a client checks the servers it talks to: what `--ca-cert` and `--insecure` asked.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// A private CA (PEM), trusted besides the platform's store.
    pub ca_cert: Option<PathBuf>,
    /// Check no certificate at all.
    pub insecure: bool,
}

/// A client's TLS settings, read once: the config every connector is built from, and what the
/// receipt records about it.
#[derive(Clone)]
pub struct ClientTls {
    config: Arc<rustls::ClientConfig>,
    /// What the protocol records.
    pub record: Tls,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The platform's trust store, read once per process (it is the same for every connector).
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| rustls_native_certs::load_native_certs().certs)
}

/// Every certificate in a PEM file, or a message naming the file.
fn read_certs(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>> {
    let bytes = std::fs::read(path).with_context(|| format!("{flag} {}", path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            BadInput(format!(
                "{flag} {}: not a PEM certificate file: {e}",
                path.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(BadInput(format!(
            "{flag} {}: no certificate (-----BEGIN CERTIFICATE-----) in the file",
            path.display()
        ))
        .into());
    }
    Ok(certs)
}

impl TrustArgs {
    /// The settings these flags ask for.
    pub fn trust(&self) -> Trust {
        Trust {
            ca_cert: self.ca_cert.clone(),
            insecure: self.insecure,
        }
    }
}

impl ServeTlsArgs {
    /// The acceptor, when a certificate was given (or a throwaway one asked for).
    pub fn acceptor(&self) -> Result<Option<tokio_rustls::TlsAcceptor>> {
        match (&self.tls_cert, &self.tls_key, &self.tls_self_signed) {
            (Some(cert), Some(key), _) => acceptor(cert, key).map(Some),
            (_, _, Some(ca_out)) => throwaway(ca_out).map(Some),
            _ => Ok(None),
        }
    }
}

impl Trust {
    /// The client config and its record, or bad input naming the file.
    pub fn client(&self) -> Result<ClientTls> {
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .context("choosing TLS versions")?;
        if self.insecure {
            let verifier = Arc::new(Unchecked(provider().signature_verification_algorithms));
            let config = builder
                .dangerous()
                .with_custom_certificate_verifier(verifier)
                .with_no_client_auth();
            return Ok(ClientTls {
                config: Arc::new(config),
                record: Tls {
                    verify: TlsVerify::Insecure,
                    ca_sha256: None,
                },
            });
        }
        let mut roots = rustls::RootCertStore::empty();
        // A platform certificate rustls cannot use is skipped: the store is what the platform
        // has, and a private CA is named explicitly.
        let _ = roots.add_parsable_certificates(system_roots().iter().cloned());
        let mut record = Tls {
            verify: TlsVerify::System,
            ca_sha256: None,
        };
        if let Some(path) = &self.ca_cert {
            let bytes =
                std::fs::read(path).with_context(|| format!("--ca-cert {}", path.display()))?;
            for cert in read_certs(path, "--ca-cert")? {
                roots.add(cert).map_err(|e| {
                    BadInput(format!(
                        "--ca-cert {}: not a usable CA certificate: {e}",
                        path.display()
                    ))
                })?;
            }
            record = Tls {
                verify: TlsVerify::CaCert,
                ca_sha256: Some(sha256_hex(&bytes)),
            };
        }
        let config = builder.with_root_certificates(roots).with_no_client_auth();
        Ok(ClientTls {
            config: Arc::new(config),
            record,
        })
    }
}

impl ClientTls {
    /// An HTTP/1 connector that speaks `http://` plainly and `https://` with these settings;
    /// `TCP_NODELAY`, and `connect_timeout` when given.
    pub fn connector(&self, connect_timeout: Option<Duration>) -> HttpsConnector<HttpConnector> {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        http.enforce_http(false);
        http.set_connect_timeout(connect_timeout);
        HttpsConnectorBuilder::new()
            .with_tls_config((*self.config).clone())
            .https_or_http()
            .enable_http1()
            .wrap_connector(http)
    }
}

/// `--insecure`: every certificate accepted, handshake signatures still checked (a peer must
/// hold the key of the certificate it shows, whoever it is).
#[derive(Debug)]
struct Unchecked(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// A throwaway CA, written to `ca_out` (PEM) for clients to trust with `--ca-cert`, and a
/// certificate for `127.0.0.1`, `::1` and `localhost` it signed: the server side of a simulator
/// that serves `https://` without anyone's real certificate.
pub fn throwaway(ca_out: &Path) -> Result<tokio_rustls::TlsAcceptor> {
    let fail = |e: rcgen::Error| anyhow::anyhow!("making a throwaway certificate: {e}");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(fail)?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(
        rcgen::DnType::CommonName,
        "loadproof sim throwaway CA (a simulator's; trust it only to try --ca-cert)",
    );
    let ca_key = rcgen::KeyPair::generate().map_err(fail)?;
    let ca = ca_params.self_signed(&ca_key).map_err(fail)?;
    let leaf_params = rcgen::CertificateParams::new(vec![
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
        "localhost".to_owned(),
    ])
    .map_err(fail)?;
    let leaf_key = rcgen::KeyPair::generate().map_err(fail)?;
    let leaf = leaf_params
        .signed_by(&leaf_key, &ca, &ca_key)
        .map_err(fail)?;
    crate::output::write_atomically(ca_out, |w| Ok(w.write_all(ca.pem().as_bytes())?))?;
    let key = PrivateKeyDer::try_from(leaf_key.serialize_der())
        .map_err(|e| anyhow::anyhow!("the throwaway key: {e}"))?;
    server_acceptor(vec![leaf.der().clone()], key)
}

/// The server side: `--tls-cert` (a PEM chain, leaf first) and `--tls-key` (its PEM key).
pub fn acceptor(cert: &Path, key_path: &Path) -> Result<tokio_rustls::TlsAcceptor> {
    let key = key_path;
    let chain = read_certs(cert, "--tls-cert")?;
    let key_bytes = std::fs::read(key).with_context(|| format!("--tls-key {}", key.display()))?;
    let key = PrivateKeyDer::from_pem_slice(&key_bytes).map_err(|e| {
        BadInput(format!(
                        "--tls-key {}: no unencrypted PEM private key in the file (an encrypted key must be decrypted first): {e}",
            key.display()
        ))
    })?;
    server_acceptor(chain, key).with_context(|| {
        format!(
            "--tls-cert {} / --tls-key {}: not a certificate and its own key",
            cert.display(),
            key_path.display()
        )
    })
}

fn server_acceptor(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<tokio_rustls::TlsAcceptor> {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .context("choosing TLS versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| BadInput(format!("--tls-cert / --tls-key: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
