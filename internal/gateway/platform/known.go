package platform

// known are upstream's Platform enum values (gateway/config.py): the names a
// platform action may name. A name outside them is unknown_platform even if
// nothing serves it; one inside them may still have no adapter here.
var known = map[string]bool{
	"local": true, "telegram": true, "discord": true, "whatsapp": true, "whatsapp_cloud": true, "slack": true,
	"signal": true, "mattermost": true, "matrix": true, "homeassistant": true, "email": true, "sms": true,
	"dingtalk": true, "api_server": true, "webhook": true, "msgraph_webhook": true, "feishu": true, "wecom": true,
	"wecom_callback": true, "weixin": true, "bluebubbles": true, "qqbot": true, "yuanbao": true, "relay": true,
}

// Known reports whether name (lower case) is one of upstream's platforms.
func Known(name string) bool { return known[name] }
