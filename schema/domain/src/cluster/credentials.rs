//! Cluster credentials at rest: a kubeconfig is sealed with ChaCha20-Poly1305 under a key
//! derived from the signing key, so a database dump alone does not give access to clusters.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};

/// Prefix of a sealed value: names the scheme, so a later one can be told apart.
const SCHEME: &str = "v1:";
const NONCE_BYTES: usize = 12;

pub struct CredentialCipher {
    cipher: ChaCha20Poly1305,
}

impl CredentialCipher {
    pub fn new(key: &[u8; 32]) -> Self {
        Self { cipher: ChaCha20Poly1305::new(&Key::from(*key)) }
    }

    /// `v1:` + base64(nonce ‖ ciphertext and tag).
    pub fn seal(&self, plaintext: &str) -> Result<String, String> {
        let nonce = ChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed = self.cipher.encrypt(&nonce, plaintext.as_bytes()).map_err(|_| "encryption failed".to_owned())?;
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        Ok(format!("{SCHEME}{}", STANDARD.encode(bytes)))
    }

    pub fn open(&self, sealed: &str) -> Result<String, String> {
        let encoded = sealed.strip_prefix(SCHEME).ok_or("the stored credentials use an unknown scheme")?;
        let bytes = STANDARD.decode(encoded).map_err(|_| "the stored credentials are corrupt")?;
        if bytes.len() < NONCE_BYTES {
            return Err("the stored credentials are corrupt".into());
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let nonce: [u8; NONCE_BYTES] = nonce.try_into().map_err(|_| "the stored credentials are corrupt")?;
        let plain = self
            .cipher
            .decrypt(&Nonce::from(nonce), ciphertext)
            .map_err(|_| "the stored credentials cannot be decrypted: was the signing key changed?")?;
        String::from_utf8(plain).map_err(|_| "the stored credentials are corrupt".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_credentials_open_with_the_same_key_only() {
        let cipher = CredentialCipher::new(&[7; 32]);
        let sealed = cipher.seal("apiVersion: v1\nkind: Config\n").expect("seal");
        assert!(sealed.starts_with("v1:"));
        assert!(!sealed.contains("Config"), "the plaintext must not show");
        assert_eq!(cipher.open(&sealed).expect("open"), "apiVersion: v1\nkind: Config\n");
        assert_ne!(cipher.seal("x").expect("seal"), cipher.seal("x").expect("seal"), "fresh nonce each time");
        let other = CredentialCipher::new(&[8; 32]);
        assert!(other.open(&sealed).expect_err("another key").contains("signing key"));
        let mut tampered = sealed.clone();
        tampered.pop();
        tampered.push('A');
        assert!(cipher.open(&tampered).is_err());
        assert!(cipher.open("plain text").is_err());
    }
}
