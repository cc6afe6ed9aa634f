"""The telecom user's phone and surroundings (upstream ``domains/telecom/user_data_model.py`` and the simulation core
of ``user_tools.py``, 1.0.1): the device state, the status bar, the network search, whether mobile data works, the
speed test and MMS. The user's tools over them are in :mod:`.telecom_user`."""

from ..models import F, DictOf, Model, NamedEnum, Opt, coerce
from ..toolkit import ToolKit

SIM_STATUS = NamedEnum("SimStatus", ("active", "missing", "locked_pin", "locked_puk"))
NETWORK_TECHNOLOGY = NamedEnum("NetworkTechnology", ("none", "2G", "3G", "4G", "5G"))
NETWORK_MODE = NamedEnum("NetworkModePreference", ("4g_5g_preferred", "4g_only", "3g_only", "2g_only"))
SIGNAL = NamedEnum("SignalStrength", ("none", "poor", "fair", "good", "excellent"))
PERFORMANCE = NamedEnum("PerformanceLevel", ("unknown", "poor", "fair", "good", "excellent"))
NETWORK_STATUS = NamedEnum("NetworkStatus", ("connected", "searching", "no_service", "emergency_only"))
APN_NAMES = NamedEnum("APNNames", ("internet", "broken"))

APN_SETTINGS = Model("APNSettings", (
    F("apn_name", APN_NAMES, "internet", "The name identifier for the APN connection."),
    F("reset_at_reboot", bool, False, "Whether the APN settings will be reset at the next reboot."),
    F("mms_apn", Opt(str), "mms", "Specific APN name used for MMS traffic, if different from general data."),
    F("mmsc_url", Opt(str), "http://mms.carrier.com/mms/wapenc",
      "The URL of the Multimedia Messaging Service Center (MMSC). Crucial for MMS."),
    F("mms_proxy", Opt(str), None, "The proxy server address required for MMS traffic on some networks."),
    F("mms_port", Opt(int), None, "The proxy server port required for MMS traffic on some networks.")),
    doc="Represents the configuration for a single Access Point Name (APN).", forbid_extra=True)
VPN_DETAILS = Model("VpnDetails", (F("server_address", Opt(str), None), F("protocol", Opt(str), None),
                                   F("server_performance", PERFORMANCE, "unknown")), forbid_extra=True)
APP_PERMISSIONS = Model("AppPermissions", (F("sms", bool, False), F("storage", bool, False), F("phone", bool, False),
                                           F("network", bool, False)), forbid_extra=True)
APP_STATUS = Model("AppStatus", (F("app_name", str),
                                 F("permissions", APP_PERMISSIONS, lambda: coerce(APP_PERMISSIONS, {}))),
                   forbid_extra=True)


def _default_apps():
    return {"messaging": coerce(APP_STATUS, {"app_name": "messaging",
                                             "permissions": {"sms": True, "storage": True, "phone": True}}),
            "browser": coerce(APP_STATUS, {"app_name": "browser", "permissions": {"network": True, "storage": True}})}


PHONE = Model("MockPhoneAttributes", (
    F("sim_card_status", SIM_STATUS, "active"), F("sim_card_missing", bool, False), F("airplane_mode", bool, False),
    F("network_signal_strength", SIGNAL, "good"), F("network_technology_connected", NETWORK_TECHNOLOGY, "5G"),
    F("network_connection_status", NETWORK_STATUS, "connected"), F("battery_level", int, 80),
    F("data_enabled", bool, True), F("roaming_enabled", bool, False),
    F("network_mode_preference", NETWORK_MODE, "4g_5g_preferred"),
    F("active_apn_settings", APN_SETTINGS, lambda: coerce(APN_SETTINGS, {})),
    F("wifi_enabled", bool, False), F("wifi_connected", bool, False), F("wifi_ssid", Opt(str), None),
    F("wifi_signal_strength", SIGNAL, "none"), F("wifi_calling_enabled", bool, False),
    F("wifi_calling_mms_over_wifi", bool, False), F("data_saver_mode", bool, False),
    F("vpn_enabled_setting", bool, False), F("vpn_connected", bool, False),
    F("vpn_details", Opt(VPN_DETAILS), None), F("app_statuses", DictOf(APP_STATUS), _default_apps)),
    forbid_extra=True)
PAYMENT_REQUEST = Model("PaymentRequest", (F("bill_id", str), F("amount_due", float), F("paid", bool, False)),
                        forbid_extra=True)
SURROUNDINGS = Model("UserSurroundings", (
    F("name", Opt(str), None), F("phone_number", Opt(str), None), F("is_abroad", bool, False),
    F("roaming_allowed", bool, False),
    F("signal_strength", DictOf(SIGNAL), lambda: {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}),
    F("mobile_data_usage_exceeded", bool, False), F("line_active", bool, True),
    F("payment_request", Opt(PAYMENT_REQUEST), None)), forbid_extra=True)
TELECOM_USER_DB = Model("TelecomUserDB", (F("device", PHONE, lambda: coerce(PHONE, {})),
                                          F("surroundings", SURROUNDINGS, lambda: coerce(SURROUNDINGS, {}))),
                        forbid_extra=True)

_SIGNAL_BARS = {"none": "📵 No Signal", "poor": "📶¹ Poor", "fair": "📶² Fair", "good": "📶³ Good",
                "excellent": "📶⁴ Excellent"}
_TECH_SPEED = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
_SIGNAL_FACTOR = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
_SEARCH_BY_PREFERENCE = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}


def enum_repr(enum: NamedEnum, value) -> str:
    """``repr`` of upstream's enum member (``<PerformanceLevel.POOR: 'poor'>``), as a dict's ``repr`` shows it."""
    return f"<{enum.name}.{value.upper()}: {value!r}>" if isinstance(value, str) else repr(value)


class PhoneSimulation(ToolKit):
    """The device state and the simulation every user tool relies on (upstream ``TelecomUserTools``' private
    methods). ``default_vpn_details`` is the record ``connect_vpn`` puts in place: upstream shares one class-level
    instance (``break_vpn`` degrades it for every later connection in the process); here each toolkit has its own,
    shared by its connections."""

    db_model = TELECOM_USER_DB

    @property
    def device(self):
        return self.db["device"]

    @property
    def surroundings(self):
        return self.db["surroundings"]

    @property
    def default_vpn_details(self):
        if "_vpn" not in self.__dict__:
            self._vpn = {"server_address": "192.168.1.1", "protocol": "OpenVPN", "server_performance": "excellent"}
        return self._vpn

    def _apn(self, field: str):
        """A field of the active APN settings; upstream's attribute access fails as Python words it when
        ``set_apn_settings`` was given something other than a dict (upstream assigns it as it is)."""
        return self._apn_settings(field)[field]

    def _apn_settings(self, attribute: str) -> dict:
        settings = self.device["active_apn_settings"]
        if not isinstance(settings, dict):
            raise AttributeError(f"'{type(settings).__name__}' object has no attribute '{attribute}'")
        return settings

    def _set_apn(self, field: str, value) -> None:
        self._apn(field)
        self.device["active_apn_settings"][field] = value

    def _check_status_bar(self) -> str:
        device = self.device
        indicators = []
        if device["airplane_mode"]:
            indicators.append("✈️ Airplane Mode")
        else:
            indicators.append(_SIGNAL_BARS.get(device["network_signal_strength"], "📵 No Signal"))
            if device["network_technology_connected"] != "none":
                indicators.append(device["network_technology_connected"])
            if device["data_enabled"] and device["network_technology_connected"] != "none":
                indicators.append("📱 Data Enabled")
                if device["data_saver_mode"]:
                    indicators.append("🔽 Data Saver")
            else:
                indicators.append("📵 Data Disabled")
        if device["wifi_enabled"] and device["wifi_connected"]:
            indicators.append(f"📡 Connected to {device['wifi_ssid']}" if device["wifi_ssid"] else "📡 Enabled")
        if device["vpn_connected"]:
            indicators.append("🔒 VPN Connected")
        indicators.append(f"🔋 {device['battery_level']}%")
        return " | ".join(indicators)

    def _check_sim_status(self) -> str:
        if self.device["sim_card_missing"]:
            return "missing"
        return self.device["sim_card_status"]

    def _get_mobile_data_working(self) -> bool:
        device, surroundings = self.device, self.surroundings
        if device["airplane_mode"] or device["network_signal_strength"] == "none":
            return False
        if device["network_connection_status"] == "no_service":
            return False
        if surroundings["is_abroad"] and (not device["roaming_enabled"] or not surroundings["roaming_allowed"]):
            return False
        if not device["data_enabled"]:
            return False
        if surroundings["mobile_data_usage_exceeded"]:
            return False
        return True

    def _run_speed_test(self):
        if not self._get_mobile_data_working():
            return None, "No Connection"
        device = self.device
        details = device["vpn_details"]
        base_speed_factor = 0.1 if device["vpn_connected"] and details and details["server_performance"] == "poor" \
            else 1.0
        if device["data_saver_mode"]:
            base_speed_factor *= 0.2
        min_speed, max_speed = _TECH_SPEED.get(device["network_technology_connected"], (0.0, 0.0))
        signal_factor = _SIGNAL_FACTOR.get(device["network_signal_strength"], 0.0)
        speed = round((min_speed + max_speed) / 2.0 * signal_factor * base_speed_factor, 2)
        if speed < 1:
            desc = "Very Poor"
        elif speed < 5:
            desc = "Poor"
        elif speed < 25:
            desc = "Fair"
        elif speed < 100:
            desc = "Good"
        else:
            desc = "Excellent"
        return speed, desc

    def _can_send_mms(self) -> bool:
        device = self.device
        if not self._get_mobile_data_working():
            return False
        if device["network_technology_connected"] == "2G":
            return False
        if device["wifi_calling_enabled"] and device["wifi_calling_mms_over_wifi"]:
            return False
        if self._apn("mmsc_url") is None:
            return False
        app = device["app_statuses"].get("messaging")
        if app is None:
            return False
        return app["permissions"]["storage"] and app["permissions"]["sms"]

    def _no_service(self) -> None:
        self.device.update(network_connection_status="no_service", network_technology_connected="none",
                           network_signal_strength="none")

    def simulate_network_search(self):
        device, strengths = self.device, self.surroundings["signal_strength"]
        if self._check_sim_status() == "active":
            device["network_connection_status"] = "connected"
            preference = device["network_mode_preference"]
            technology = _SEARCH_BY_PREFERENCE.get(preference, "4G") if isinstance(preference, str) else "4G"
            if preference == "4g_5g_preferred":
                technology = "4G" if strengths.get("5G", "none") == "none" else "5G"
            device["network_technology_connected"] = technology
            device["network_signal_strength"] = strengths.get(technology, "none")
        else:
            self._no_service()
        if device["airplane_mode"]:
            self._no_service()
        if self._apn("apn_name") == "broken":
            self._no_service()
        if not self.surroundings["line_active"]:
            self._no_service()

    def _toggle_airplane_mode(self) -> bool:
        device = self.device
        was_on = device["airplane_mode"]
        device["airplane_mode"] = not was_on
        if was_on:
            device["network_connection_status"] = "searching"
            if device["wifi_enabled"]:
                device.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
        else:
            device.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
            if device["vpn_connected"]:
                self._disconnect_vpn()
        self.simulate_network_search()
        return device["airplane_mode"]

    def _toggle_data(self) -> bool:
        self.device["data_enabled"] = not self.device["data_enabled"]
        self.simulate_network_search()
        return self.device["data_enabled"]

    def _toggle_roaming(self) -> bool:
        self.device["roaming_enabled"] = not self.device["roaming_enabled"]
        self.simulate_network_search()
        return self.device["roaming_enabled"]

    def _toggle_data_saver_mode(self) -> bool:
        self.device["data_saver_mode"] = not self.device["data_saver_mode"]
        return self.device["data_saver_mode"]

    def _toggle_wifi_calling(self) -> bool:
        self.device["wifi_calling_enabled"] = not self.device["wifi_calling_enabled"]
        return self.device["wifi_calling_enabled"]

    def _connect_vpn(self):
        if self.device["vpn_connected"]:
            return None
        self.device["vpn_connected"] = True
        self.device["vpn_details"] = self.default_vpn_details
        return True

    def _disconnect_vpn(self) -> bool:
        if not self.device["vpn_connected"]:
            return False
        self.device["vpn_connected"] = False
        self.device["vpn_details"] = None
        return True
