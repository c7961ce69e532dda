package agents

import "testing"

// A path variable (*_FILE, *_BUNDLE) is not a credential unless the rest of
// its name says one: AWS_CA_BUNDLE is a CA bundle's path.
func TestPathVariablesAreNotCredentials(t *testing.T) {
	for _, n := range []string{"AWS_CA_BUNDLE", "AWS_CONFIG_FILE", "aws_ca_bundle", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"} {
		if CredentialName(n) {
			t.Errorf("%s is held back as a credential; it is a path", n)
		}
	}
	for _, n := range []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_PROFILE",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "SSH_KEY_FILE", "GITHUB_TOKEN"} {
		if !CredentialName(n) {
			t.Errorf("%s passes as no credential", n)
		}
	}
}
